/** The validated settings, as the API's events module receives them. */
export const EVENTS_SETTINGS = Symbol('EVENTS_SETTINGS');
