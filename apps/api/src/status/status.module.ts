import { Module } from '@nestjs/common';
import { StatusController } from './status.controller';

/** `GET /v1/status`: the fleet as the API reads it from the database (workers, catalog). */
@Module({
  controllers: [StatusController],
})
export class StatusModule {}
