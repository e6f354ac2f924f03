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
});
