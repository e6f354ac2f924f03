import { DynamicModule, Module } from '@nestjs/common';
import { Settings } from '@app/config';
import { Database, EventRepository, WebhookRepository } from '@app/persistence';
import { WebhookSubscriptionsService } from '../webhooks/webhook-subscriptions.service';
import { WebhooksController } from '../webhooks/webhooks.controller';
import { EventStreamHub } from './event-stream.hub';
import { EVENTS_SETTINGS } from './events.tokens';
import { ThreadEventsController } from './thread-events.controller';

/**
 * The API's share of events: the thread event stream (SSE) and webhook subscriptions. Relies on
 * the global persistence and logging modules and the API's global auth guard.
 */
@Module({})
export class EventsModule {
  static forRoot(settings: Settings): DynamicModule {
    return {
      module: EventsModule,
      controllers: [ThreadEventsController, WebhooksController],
      providers: [
        { provide: EVENTS_SETTINGS, useValue: settings },
        {
          provide: EventRepository,
          inject: [Database],
          useFactory: (db: Database) => new EventRepository(db),
        },
        {
          provide: WebhookRepository,
          inject: [Database],
          useFactory: (db: Database) => new WebhookRepository(db),
        },
        EventStreamHub,
        WebhookSubscriptionsService,
      ],
      // The MCP front door's 2025-11-25 stream reads the same event log.
      exports: [EventStreamHub, EventRepository],
    };
  }
}
