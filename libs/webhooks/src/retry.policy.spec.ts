import { DEFAULT_RETRY_POLICY, nextRetryMs, retryDelayMs } from './retry.policy';

const mid = (): number => 0.5;

describe('retry policy', () => {
  it('doubles from the base up to the cap', () => {
    const delays = [1, 2, 3, 11, 12, 20].map((n) => retryDelayMs(DEFAULT_RETRY_POLICY, n, mid));
    expect(delays).toEqual([15_000, 30_000, 60_000, 4 * 3_600_000, 4 * 3_600_000, 4 * 3_600_000]);
  });

  it('jitters within ±20 %', () => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => 0)).toBe(12_000);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, 1, () => 1)).toBe(18_000);
  });

  it('retries for about a day, then dead-letters', () => {
    let age = 0;
    let attempts = 1;
    for (;;) {
      const delay = nextRetryMs(DEFAULT_RETRY_POLICY, attempts, age, mid);
      if (delay === null) break;
      age += delay;
      attempts += 1;
    }
    expect(age).toBeGreaterThan(20 * 3_600_000);
    expect(age).toBeLessThanOrEqual(24 * 3_600_000);
    expect(attempts).toBeGreaterThanOrEqual(12);
    expect(attempts).toBeLessThanOrEqual(20);
  });
});
