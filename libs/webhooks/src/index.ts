export { newWebhookSecret, verifyWebhook } from './webhook-signer';
export {
  DNS_TIMEOUT_MS,
  REFUSED_HOST_MESSAGE,
  WebhookDestinationError,
  checkDestination,
  parseWebhookUrl,
} from './destination.guard';
export { DEFAULT_RETRY_POLICY } from './retry.policy';
export { WebhookDeliveryWorker } from './delivery.worker';
export type { DeliveryWorkerOptions } from './delivery.worker';
export { AnswerLinkSigner, EventAnswerLinks } from './answer-link';
export type { AnswerGrant } from './answer-link';
