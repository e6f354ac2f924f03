export { EVENT_TYPES, DeliveryStatus } from './webhooks.enum';
export type { EventType } from './webhooks.enum';
export {
  WEBHOOK_SECRET_PREFIX,
  DEFAULT_TOLERANCE_S,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
} from './webhook-signer';
export type { WebhookHeaders } from './webhook-signer';
export { isPublicAddress } from './address.policy';
export {
  DNS_TIMEOUT_MS,
  REFUSED_HOST_MESSAGE,
  WebhookDestinationError,
  checkDestination,
  parseWebhookUrl,
  systemResolver,
} from './destination.guard';
export type {
  CheckedDestination,
  DestinationPolicy,
  DestinationProblem,
  HostResolver,
} from './destination.guard';
export { postWebhook } from './webhook.sender';
export type { WebhookAnswer, WebhookPost } from './webhook.sender';
export { DEFAULT_RETRY_POLICY, nextRetryMs, retryDelayMs } from './retry.policy';
export type { RetryPolicy } from './retry.policy';
export { EVENT_ID_PREFIX, publicEventId, toEventView } from './event.projection';
export type { EventProjectionContext, EventTaskSummary, TaskEventView } from './event.projection';
export { WebhookDeliveryWorker } from './delivery.worker';
export type { DeliveryLog, DeliveryWorkerOptions } from './delivery.worker';
