/** The validated settings, as the webhooks module of the poller receives them. */
export const WEBHOOK_SETTINGS = Symbol('WEBHOOK_SETTINGS');
