import { Module } from '@nestjs/common';
import { AdminController } from './admin.controller';

/**
 * The operator routes (`/v1/admin/…`). The controller is also a provider, exported: the console's
 * operator actions call it, so they check, fence and record exactly as `POST /v1/admin/…` does.
 */
@Module({
  controllers: [AdminController],
  providers: [AdminController],
  exports: [AdminController],
})
export class AdminModule {}
