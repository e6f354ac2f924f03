import { DynamicModule, Module } from '@nestjs/common';
import { Settings } from '@app/config';
import { Database, EventRepository, WebhookRepository } from '@app/persistence';
import { EventRetentionJob } from './event-retention.job';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WEBHOOK_SETTINGS, WEBHOOK_WORKER_ID } from './webhooks.tokens';

/**
 * The poller's share of events: webhook delivery and event retention. Needs the global
 * persistence, metrics and logging modules the poller's root module imports.
 */
@Module({})
export class PollerWebhooksModule {
  /** @param workerId the poller's WORKER_ID: delivery leases carry the same owner as task leases. */
  static forRoot(settings: Settings, workerId: string): DynamicModule {
    return {
      module: PollerWebhooksModule,
      providers: [
        { provide: WEBHOOK_SETTINGS, useValue: settings },
        { provide: WEBHOOK_WORKER_ID, useValue: workerId },
        {
          provide: WebhookRepository,
          inject: [Database],
          useFactory: (db: Database) => new WebhookRepository(db),
        },
        {
          provide: EventRepository,
          inject: [Database],
          useFactory: (db: Database) => new EventRepository(db),
        },
        WebhookDeliveryService,
        EventRetentionJob,
      ],
      // The poller's lifecycle starts and stops both, together with task claiming.
      exports: [WebhookDeliveryService, EventRetentionJob],
    };
  }
}
