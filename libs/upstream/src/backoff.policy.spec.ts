import { BackoffPolicy, DEFAULT_BACKOFF } from './backoff.policy';

describe('BackoffPolicy', () => {
  it('doubles from 1 s and caps at 60 s without jitter', () => {
    const policy = new BackoffPolicy({ ...DEFAULT_BACKOFF, jitter: 0 });
    expect([1, 2, 3, 4, 7, 8, 50].map((n) => policy.delayMs(n))).toEqual([
      1000, 2000, 4000, 8000, 60_000, 60_000, 60_000,
    ]);
  });

  it('stays within ±20 % of the base delay', () => {
    const low = new BackoffPolicy(DEFAULT_BACKOFF, () => 0);
    const high = new BackoffPolicy(DEFAULT_BACKOFF, () => 0.999999);
    expect(low.delayMs(2)).toBe(1600);
    expect(high.delayMs(2)).toBe(2400);
    expect(high.delayMs(20)).toBeLessThanOrEqual(72_000);
  });

  it("waits at least the server's Retry-After, up to the cap, spread later only", () => {
    const low = new BackoffPolicy(DEFAULT_BACKOFF, () => 0);
    const high = new BackoffPolicy(DEFAULT_BACKOFF, () => 0.5);
    expect(low.delayMs(1, 30_000)).toBe(30_000);
    expect(high.delayMs(1, 30_000)).toBe(33_000);
    expect(low.delayMs(1, 3_600_000)).toBe(60_000);
    // A backoff already longer, or nothing usable asked: the backoff.
    expect(low.delayMs(10, 2000)).toBe(48_000);
    expect(low.delayMs(1, Number.NaN)).toBe(800);
  });
});
