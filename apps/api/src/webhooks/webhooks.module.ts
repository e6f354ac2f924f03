import { Module } from '@nestjs/common';
import { WebhookSubscriptionsService } from './webhook-subscriptions.service';
import { WebhooksController } from './webhooks.controller';

/**
 * Webhook subscriptions (`/v1/webhooks`) and their deliveries as the subscriber reads them. The
 * deliveries themselves are posted by the pollers (libs/webhooks), never by the API.
 */
@Module({
  controllers: [WebhooksController],
  providers: [WebhookSubscriptionsService],
})
export class WebhooksModule {}
