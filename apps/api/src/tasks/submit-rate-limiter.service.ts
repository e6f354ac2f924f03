import { Inject, Injectable } from '@nestjs/common';
import { Settings } from '@app/config';
import { SETTINGS } from '../settings.token';

interface Bucket {
  tokens: number;
  at: number;
}

/** Buckets kept before idle (full) ones are swept: bounds memory under many distinct users. */
const SWEEP_AT = 10_000;

/**
 * Per-user token bucket on submits: SUBMIT_RATE_LIMIT_PER_MINUTE tokens, refilled evenly, so a
 * burst of a minute's worth is allowed and then one submit per 60/limit seconds. In memory, per
 * API replica: N replicas allow up to N times the limit, an accepted trade for no shared state
 * on the hot path (the limit guards the database against runaway clients, not billing).
 */
@Injectable()
export class SubmitRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly capacity: number;
  /** The clock; replaceable in unit tests. */
  now: () => number = Date.now;

  constructor(@Inject(SETTINGS) settings: Settings) {
    this.capacity = settings.api.submitRateLimitPerMinute;
  }

  /** Takes one token for `userId`; returns 0 when allowed, else the seconds to wait. */
  take(userId: string): number {
    if (this.capacity <= 0) return 0;
    const now = this.now();
    const perMs = this.capacity / 60_000;
    const bucket = this.buckets.get(userId) ?? { tokens: this.capacity, at: now };
    bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(userId, bucket);
      return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
    }
    bucket.tokens -= 1;
    if (this.buckets.size >= SWEEP_AT) this.sweep(now, perMs);
    this.buckets.set(userId, bucket);
    return 0;
  }

  private sweep(now: number, perMs: number): void {
    for (const [user, b] of this.buckets) {
      if (b.tokens + (now - b.at) * perMs >= this.capacity) this.buckets.delete(user);
    }
  }
}
