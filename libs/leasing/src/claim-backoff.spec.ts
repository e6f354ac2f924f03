// Guards the claim error backoff: doubling from 250 ms to 5 s, reset by a successful claim.
import { ClaimBackoff } from './claim-backoff';

it('doubles from the minimum to the cap, and starts over after a success', () => {
  const backoff = new ClaimBackoff(250, 5000);
  const delays = Array.from({ length: 7 }, () => backoff.failed());
  expect(delays).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  backoff.succeeded();
  expect(backoff.failed()).toBe(250);
});
