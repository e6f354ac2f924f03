import { DynamicModule, Module } from '@nestjs/common';
import { EventRetentionJob } from './event-retention.job';
import { WebhookDeliveryService } from './webhook-delivery.service';
import { WEBHOOK_WORKER_ID } from './webhooks.tokens';

/**
 * The poller's share of events: webhook delivery and event retention. Needs the global
 * settings, persistence, metrics and logging modules the poller's root module imports.
 */
@Module({})
export class PollerWebhooksModule {
  /** @param workerId the poller's WORKER_ID: delivery leases carry the same owner as task leases. */
  static forRoot(workerId: string): DynamicModule {
    return {
      module: PollerWebhooksModule,
      providers: [
        { provide: WEBHOOK_WORKER_ID, useValue: workerId },
        WebhookDeliveryService,
        EventRetentionJob,
      ],
      // The poller's lifecycle starts and stops both, together with task claiming (event
      // retention as one of its periodic jobs, upkeep.providers.ts).
      exports: [WebhookDeliveryService, EventRetentionJob],
    };
  }
}
