/** The event types of events.md ("The event"); SSE and webhooks share them. */
export const EVENT_TYPES = [
  'task.working',
  'task.input_required',
  'task.progress',
  'task.completed',
  'task.failed',
  'task.cancelled',
] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Where a delivery stands. `dead` is dead-lettered (retries exhausted or a refused destination),
 * `disabled` got a 410 (its subscription is disabled with it), `skipped` found its subscription
 * already disabled and sent nothing.
 */
export enum DeliveryStatus {
  Pending = 'pending',
  Delivered = 'delivered',
  Dead = 'dead',
  Disabled = 'disabled',
  Skipped = 'skipped',
}
