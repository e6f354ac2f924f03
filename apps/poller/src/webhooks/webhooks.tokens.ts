/** The validated settings, as the webhooks module of the poller receives them. */
export const WEBHOOK_SETTINGS = Symbol('WEBHOOK_SETTINGS');
/** The poller's WORKER_ID, the owner written on claimed deliveries. */
export const WEBHOOK_WORKER_ID = Symbol('WEBHOOK_WORKER_ID');
