import { Module } from '@nestjs/common';
import { EventStreamHub } from './event-stream.hub';
import { EventStreams } from './event-streams.service';

/**
 * The process's one EventStreamHub, which wakes every open event stream when its thread has news
 * and ends them at shutdown: the `/v1` SSE streams, the `/mcp` status streams and subscriptions,
 * and the console's task page; and EventStreams, which opens the streams within each user's
 * limit. A module of its own, without routes, so each of those features imports the same
 * instances.
 */
@Module({
  providers: [EventStreamHub, EventStreams],
  exports: [EventStreamHub, EventStreams],
})
export class EventStreamModule {}
