import type { BackoffSettings } from './upstream.hooks';

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 1000, maxMs: 60_000, jitter: 0.2 };

/**
 * Delay before connect retry number `failures` (1 = after the first failure): initial × 2^(n-1),
 * capped, then ±jitter. The jitter is what keeps a fleet of workers from reconnecting in step
 * after an upstream restart.
 */
export class BackoffPolicy {
  constructor(
    private readonly settings: BackoffSettings = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * With `retryAfterMs` (the server's `Retry-After`, docs/connections.md, "Failure
   * classification"): no
   * sooner than that, up to the cap, spread later only.
   */
  delayMs(failures: number, retryAfterMs?: number): number {
    const exponent = Math.max(0, failures - 1);
    // 2^exponent overflows to Infinity for huge counts; min() keeps the cap exact anyway.
    const base = Math.min(this.settings.maxMs, this.settings.initialMs * 2 ** exponent);
    const spread = base * this.settings.jitter;
    const delay = Math.max(0, Math.round(base - spread + this.random() * 2 * spread));
    if (retryAfterMs === undefined || !(retryAfterMs > 0)) return delay;
    const asked = Math.min(retryAfterMs, this.settings.maxMs);
    return Math.max(delay, Math.round(asked * (1 + this.settings.jitter * this.random())));
  }
}
