import { Module } from '@nestjs/common';
import { EventStreamHub } from './event-stream.hub';

/**
 * The process's one EventStreamHub, which wakes every open event stream when its thread has news
 * and ends them at shutdown: the `/v1` SSE streams, the `/mcp` status streams and subscriptions,
 * and the console's task page. A module of its own, without routes, so each of those features
 * imports the same instance.
 */
@Module({
  providers: [EventStreamHub],
  exports: [EventStreamHub],
})
export class EventStreamModule {}
