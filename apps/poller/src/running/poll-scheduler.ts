import { MAX_POLL_INTERVAL_MS, TaskStatus, type TaskSnapshot } from '@app/common';

/** The scheduling settings of leases.md ("Scheduling after an attempt"). */
export interface SchedulingSettings {
  pollIntervalMs: number;
  minPollIntervalMs: number;
  inputRequiredPollIntervalMs: number;
  /** The slow safety poll of a task whose changes are pushed: this many normal intervals. */
  pushSafetyPollFactor?: number;
  backoffBaseMs: number;
  maxBackoffMs: number;
}

/** ±10 %: enough to spread a fleet that started together, small enough to keep the promised rate. */
export const POLL_JITTER = 0.1;
/** ±20 % on errors: an outage ends for every task at once, so retries need a wider spread. */
export const BACKOFF_JITTER = 0.2;
/** 2^16 × base is already far past any sensible MAX_BACKOFF_MS; the cap keeps the power finite. */
export const MAX_BACKOFF_EXPONENT = 16;

/**
 * Pure delay arithmetic: how long until a task is due again. The caller hands the delay to a
 * fenced write that adds it to the database's `now()`, so no pod clock enters the schedule.
 * `random` is injectable so the bands can be tested exactly.
 */
export class PollScheduler {
  constructor(
    private readonly settings: SchedulingSettings,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * After a successful attempt: the upstream's hint if any, else POLL_INTERVAL_MS; an
   * `input_required` task waits at least INPUT_REQUIRED_POLL_INTERVAL_MS (a person has to act,
   * polling faster only costs the upstream). Clamped to [MIN_POLL_INTERVAL_MS, 24 h], ±10 %
   * jitter, and clamped again so jitter never leaves the allowed range. A task whose changes the
   * upstream pushes (`pushed`) waits PUSH_SAFETY_POLL_FACTOR times as long: the push wakes it,
   * and this slow poll only covers a lost notification (docs/connections.md, "Push"). But no
   * longer than to the task's TTL backstop (`backstopAtMs`, against `nowMs`) or the interval it
   * would have had, whichever is later: an upstream that drops an expired task pushes nothing.
   */
  afterSuccess(
    snapshot: Pick<TaskSnapshot, 'pollAfterMs' | 'backstopAtMs'> & { status: TaskStatus },
    pushed = false,
    nowMs = Date.now(),
  ): number {
    const { pollIntervalMs, inputRequiredPollIntervalMs } = this.settings;
    const hint = validHint(snapshot.pollAfterMs);
    let base = hint ?? pollIntervalMs;
    if (snapshot.status === TaskStatus.InputRequired) {
      base = Math.max(hint ?? 0, inputRequiredPollIntervalMs);
    }
    // The factor multiplies the interval the task would have had (after the floor), so an
    // upstream's short hint does not shorten the safety poll below the factor's promise.
    const factor = pushed ? (this.settings.pushSafetyPollFactor ?? 1) : 1;
    const clamped = this.clampPoll(this.clampPoll(base) * factor);
    const delay = this.clampPoll(this.jitter(clamped, POLL_JITTER));
    if (!pushed || snapshot.backstopAtMs === undefined) return Math.round(delay);
    const unpushed = this.clampPoll(this.jitter(this.clampPoll(base), POLL_JITTER));
    return Math.round(Math.min(delay, Math.max(unpushed, snapshot.backstopAtMs - nowMs)));
  }

  /**
   * After a transient error: `min(base × 2^min(k, 16), MAX_BACKOFF_MS)` with ±20 % jitter, where
   * `k` is the consecutive-error count before this error. The jitter band is around the capped
   * value (leases.md), so the longest wait is 1.2 × MAX_BACKOFF_MS. When the upstream asked to
   * be left alone for `retryAfterMs` (its `Retry-After`), no sooner than that, up to
   * MAX_BACKOFF_MS, and spread up to 20 % later only, so that the tasks it turned away do not all
   * come back at the instant it named.
   */
  afterError(consecutiveErrorsBefore: number, retryAfterMs?: number): number {
    const { backoffBaseMs, maxBackoffMs } = this.settings;
    const k = Math.min(Math.max(0, Math.floor(consecutiveErrorsBefore)), MAX_BACKOFF_EXPONENT);
    const raw = Math.min(backoffBaseMs * 2 ** k, maxBackoffMs);
    const backoff = this.jitter(raw, BACKOFF_JITTER);
    if (retryAfterMs === undefined || !(retryAfterMs > 0)) return Math.round(backoff);
    const asked = Math.min(retryAfterMs, maxBackoffMs) * (1 + BACKOFF_JITTER * this.random());
    return Math.round(Math.max(backoff, asked));
  }

  private clampPoll(ms: number): number {
    return Math.min(Math.max(ms, this.settings.minPollIntervalMs), MAX_POLL_INTERVAL_MS);
  }

  /** Uniform in [ms × (1 − f), ms × (1 + f)]. */
  private jitter(ms: number, fraction: number): number {
    return ms * (1 - fraction + 2 * fraction * this.random());
  }
}

function validHint(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
