import { Module } from '@nestjs/common';
import { EventStreamModule } from './event-stream.module';
import { ThreadEventsController } from './thread-events.controller';

/**
 * The `/v1` event streams (SSE, docs/events.md): a thread's events and the caller's. Relies on the
 * global settings, persistence and logging modules and the API's global auth guard.
 */
@Module({
  imports: [EventStreamModule],
  controllers: [ThreadEventsController],
})
export class EventsModule {}
