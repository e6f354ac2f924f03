// Guards the scheduling arithmetic of leases.md: clamping, the slow interval, jitter bands, backoff.
import { MAX_POLL_INTERVAL_MS, TaskStatus } from '@app/common';
import { PollScheduler, SchedulingSettings } from './poll-scheduler';

const settings: SchedulingSettings = {
  pollIntervalMs: 5000,
  minPollIntervalMs: 1000,
  inputRequiredPollIntervalMs: 30000,
  backoffBaseMs: 1000,
  maxBackoffMs: 300000,
};
const at = (r: number) => new PollScheduler(settings, () => r);
const working = TaskStatus.Working;

describe('PollScheduler.afterSuccess', () => {
  it('uses POLL_INTERVAL_MS without a hint, jittered by exactly ±10 % at the extremes', () => {
    expect(at(0).afterSuccess({ status: working })).toBe(4500);
    expect(at(0.5).afterSuccess({ status: working })).toBe(5000);
    expect(at(1).afterSuccess({ status: working })).toBe(5500);
  });

  it('a pushed task waits PUSH_SAFETY_POLL_FACTOR intervals, counted after the floor', () => {
    const pushed = new PollScheduler({ ...settings, pushSafetyPollFactor: 10 }, () => 0.5);
    expect(pushed.afterSuccess({ status: working }, true)).toBe(50000);
    // A hint under MIN_POLL_INTERVAL_MS is raised to it first: 10 × 1000, not 10 × 10.
    expect(pushed.afterSuccess({ status: working, pollAfterMs: 10 }, true)).toBe(10000);
    expect(pushed.afterSuccess({ status: working }, false)).toBe(5000);
  });

  it("a pushed task's safety poll comes no later than its TTL backstop, nor sooner than an interval", () => {
    const pushed = new PollScheduler({ ...settings, pushSafetyPollFactor: 10 }, () => 0.5);
    const now = 1_000_000;
    // The backstop 12 s away: polled then, not 50 s away (an expiry is not pushed).
    expect(pushed.afterSuccess({ status: working, backstopAtMs: now + 12_000 }, true, now)).toBe(
      12000,
    );
    // The backstop closer than an interval, or past: the interval the task would have had.
    expect(pushed.afterSuccess({ status: working, backstopAtMs: now + 100 }, true, now)).toBe(5000);
    expect(pushed.afterSuccess({ status: working, backstopAtMs: now - 9_000 }, true, now)).toBe(
      5000,
    );
    // Further than the safety poll: the safety poll.
    expect(pushed.afterSuccess({ status: working, backstopAtMs: now + 900_000 }, true, now)).toBe(
      50000,
    );
    // Not pushed: polled on its interval anyway, the backstop changes nothing.
    expect(pushed.afterSuccess({ status: working, backstopAtMs: now + 100 }, false, now)).toBe(
      5000,
    );
  });

  it('honours the upstream hint', () => {
    expect(at(0.5).afterSuccess({ status: working, pollAfterMs: 12000 })).toBe(12000);
  });

  it('clamps a hint below MIN_POLL_INTERVAL_MS up, and jitter never goes below the minimum', () => {
    expect(at(0.5).afterSuccess({ status: working, pollAfterMs: 10 })).toBe(1000);
    expect(at(0).afterSuccess({ status: working, pollAfterMs: 10 })).toBe(1000);
    expect(at(1).afterSuccess({ status: working, pollAfterMs: 10 })).toBe(1100);
  });

  it('clamps a hint above 24 h down, and jitter never goes above 24 h', () => {
    expect(at(0.5).afterSuccess({ status: working, pollAfterMs: 1e12 })).toBe(MAX_POLL_INTERVAL_MS);
    expect(at(1).afterSuccess({ status: working, pollAfterMs: 1e12 })).toBe(MAX_POLL_INTERVAL_MS);
    expect(at(0).afterSuccess({ status: working, pollAfterMs: 1e12 })).toBe(
      MAX_POLL_INTERVAL_MS * 0.9,
    );
  });

  it('ignores hints that are not finite positive numbers', () => {
    for (const bad of [NaN, Infinity, -5, 0]) {
      expect(at(0.5).afterSuccess({ status: working, pollAfterMs: bad })).toBe(5000);
    }
  });

  it('polls input_required at the slow interval, or slower if the upstream asks', () => {
    const ir = TaskStatus.InputRequired;
    expect(at(0.5).afterSuccess({ status: ir })).toBe(30000);
    expect(at(0.5).afterSuccess({ status: ir, pollAfterMs: 2000 })).toBe(30000);
    expect(at(0.5).afterSuccess({ status: ir, pollAfterMs: 60000 })).toBe(60000);
  });

  it('stays inside the band for random draws', () => {
    const scheduler = new PollScheduler(settings);
    for (let i = 0; i < 1000; i++) {
      const delay = scheduler.afterSuccess({ status: working });
      expect(delay).toBeGreaterThanOrEqual(4500);
      expect(delay).toBeLessThanOrEqual(5500);
    }
  });
});

describe('PollScheduler.afterError', () => {
  it('doubles from BACKOFF_BASE_MS with the count before this error', () => {
    expect([0, 1, 2, 3, 4].map((k) => at(0.5).afterError(k))).toEqual([
      1000, 2000, 4000, 8000, 16000,
    ]);
  });

  it('caps at MAX_BACKOFF_MS and the exponent at 16', () => {
    expect(at(0.5).afterError(9)).toBe(300000);
    expect(at(0.5).afterError(1e6)).toBe(300000);
    const uncapped = new PollScheduler({ ...settings, maxBackoffMs: 1e15 }, () => 0.5);
    expect(uncapped.afterError(16)).toBe(1000 * 2 ** 16);
    expect(uncapped.afterError(40)).toBe(1000 * 2 ** 16);
  });

  it('jitters by exactly ±20 % around the capped value', () => {
    expect(at(0).afterError(2)).toBe(3200);
    expect(at(1).afterError(2)).toBe(4800);
    expect(at(0).afterError(50)).toBe(240000);
    expect(at(1).afterError(50)).toBe(360000);
  });

  it('treats a negative or fractional count as its floor, never below zero', () => {
    expect(at(0.5).afterError(-3)).toBe(1000);
    expect(at(0.5).afterError(1.7)).toBe(2000);
  });

  it("waits at least the upstream's Retry-After, spread up to 20 % later, never earlier", () => {
    // Backoff 1000 (k 0) against an asked 30 s: the asked time wins, jittered upward only.
    expect(at(0).afterError(0, 30_000)).toBe(30_000);
    expect(at(1).afterError(0, 30_000)).toBe(36_000);
    // A backoff already longer than the asked time stays as it was.
    expect(at(0.5).afterError(4, 2_000)).toBe(16_000);
    // Asked for longer than MAX_BACKOFF_MS (300 s): the operator's bound holds.
    expect(at(0).afterError(0, 3_600_000)).toBe(300_000);
    // Nothing usable asked: the plain backoff.
    expect(at(0.5).afterError(1, 0)).toBe(2000);
    expect(at(0.5).afterError(1, Number.NaN)).toBe(2000);
  });
});
