import { Module } from '@nestjs/common';
import { WebhookSubscriptionsService } from '../webhooks/webhook-subscriptions.service';
import { WebhooksController } from '../webhooks/webhooks.controller';
import { EventStreamHub } from './event-stream.hub';
import { ThreadEventsController } from './thread-events.controller';

/**
 * The API's share of events: the thread event stream (SSE) and webhook subscriptions. Relies on
 * the global settings, persistence and logging modules and the API's global auth guard.
 */
@Module({
  controllers: [ThreadEventsController, WebhooksController],
  providers: [EventStreamHub, WebhookSubscriptionsService],
  exports: [EventStreamHub],
})
export class EventsModule {}
