/** How failed deliveries are retried: exponential backoff with jitter inside a window. */
export interface RetryPolicy {
  /** Delay after the first failed attempt; doubles per attempt. */
  baseMs: number;
  /** Cap on one delay. */
  maxMs: number;
  /** After this long since the event, the next failure dead-letters the delivery. */
  windowMs: number;
  /** ±fraction of random spread, so a receiver coming back is not hit by a synchronized wave. */
  jitter: number;
}

/**
 * 15 s doubling to a 4 h cap inside 24 h: about 15 attempts, the first few minutes apart (a
 * receiver restarting), then hours apart (a receiver down for the night). Close to Standard
 * Webhooks' suggested schedule, which also spans about a day.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseMs: 15_000,
  maxMs: 4 * 3_600_000,
  windowMs: 24 * 3_600_000,
  jitter: 0.2,
};

/** The delay after failed attempt number `attempt` (1-based), jittered. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random = Math.random): number {
  const raw = Math.min(policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30), policy.maxMs);
  return Math.round(raw * (1 + policy.jitter * (2 * random() - 1)));
}

/**
 * When to try again after failed attempt `attempt`, for a delivery `ageMs` old (database
 * clock); null means dead-letter: the retry would fall outside the window.
 */
export function nextRetryMs(
  policy: RetryPolicy,
  attempt: number,
  ageMs: number,
  random = Math.random,
): number | null {
  const delay = retryDelayMs(policy, attempt, random);
  return ageMs + delay > policy.windowMs ? null : delay;
}
