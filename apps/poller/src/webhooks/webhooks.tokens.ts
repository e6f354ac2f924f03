/** The poller's WORKER_ID, the owner written on claimed deliveries. */
export const WEBHOOK_WORKER_ID = Symbol('WEBHOOK_WORKER_ID');
