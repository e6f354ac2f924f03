export { createGatewayClient, GatewayProblem, unwrap } from './client';
export type {
  GatewayClient,
  GatewayClientOptions,
  Problem,
  Task,
  TaskEvent,
  TaskSummary,
} from './client';
export { answerQuestion, listAllTasks, submitAndWait, TERMINAL_STATUSES } from './helpers';
export type { SubmitAndWaitOptions } from './helpers';
export { followEvents } from './events';
export type { FollowEventsOptions, StreamedEvent } from './events';
export { verifyWebhookSignature } from './webhook-signature';
export type { WebhookDelivery } from './webhook-signature';
export type { components, operations, paths } from './schema';
