/**
 * The delay after a failed claim (the database is down or restarting): doubling from `minMs`
 * to `maxMs`, back to nothing after a claim succeeds. 250 ms to 5 s: a Postgres restart costs
 * seconds of latency, not minutes, and a long outage costs one warning every 5 s per engine.
 */
export class ClaimBackoff {
  private delayMs = 0;

  constructor(
    private readonly minMs = 250,
    private readonly maxMs = 5000,
  ) {}

  /** The delay before the next claim after one more failure. */
  failed(): number {
    this.delayMs = Math.min(Math.max(this.delayMs * 2, this.minMs), this.maxMs);
    return this.delayMs;
  }

  /** A claim succeeded: the next failure starts again from `minMs`. */
  succeeded(): void {
    this.delayMs = 0;
  }
}
