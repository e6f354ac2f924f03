/** Injection token of the validated {@link Settings} in the API. */
export const SETTINGS = Symbol('SETTINGS');
