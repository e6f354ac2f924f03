// Guards the one "wait until poked or a time" primitive: a poke is never lost, a learnt time cuts the wait.
import { WakeSignal } from './wake-signal';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** The wait's outcome once settled, else 'pending'. */
function track(wait: Promise<string>): { value: string } {
  const state = { value: 'pending' };
  void wait.then((reason) => (state.value = reason));
  return state;
}

it('times out after the given time and not before', async () => {
  const signal = new WakeSignal();
  const wait = track(signal.wait(1000));
  await jest.advanceTimersByTimeAsync(999);
  expect(wait.value).toBe('pending');
  await jest.advanceTimersByTimeAsync(1);
  expect(wait.value).toBe('timeout');
});

it('a poke ends the wait at once', async () => {
  const signal = new WakeSignal();
  const wait = track(signal.wait(60_000));
  signal.poke();
  await jest.advanceTimersByTimeAsync(0);
  expect(wait.value).toBe('poked');
});

it('a poke while nobody waits ends the next wait at once, and only that one', async () => {
  const signal = new WakeSignal();
  signal.poke();
  await expect(signal.wait(60_000)).resolves.toBe('poked');
  const next = track(signal.wait(1000));
  await jest.advanceTimersByTimeAsync(500);
  expect(next.value).toBe('pending');
});

it('wakeAt shortens a running wait and never lengthens it', async () => {
  const signal = new WakeSignal();
  const wait = track(signal.wait(10_000));
  signal.wakeAt(Date.now() + 300);
  signal.wakeAt(Date.now() + 5000);
  await jest.advanceTimersByTimeAsync(299);
  expect(wait.value).toBe('pending');
  await jest.advanceTimersByTimeAsync(1);
  expect(wait.value).toBe('timeout');
});

it('a time learnt while nobody waits bounds the next wait', async () => {
  const signal = new WakeSignal();
  signal.wakeAt(Date.now() + 200);
  const wait = track(signal.wait(10_000));
  await jest.advanceTimersByTimeAsync(200);
  expect(wait.value).toBe('timeout');
});

it('an infinite wait ends only on a poke', async () => {
  const signal = new WakeSignal();
  const wait = track(signal.wait(Infinity));
  await jest.advanceTimersByTimeAsync(24 * 3600_000);
  expect(wait.value).toBe('pending');
  signal.poke();
  await jest.advanceTimersByTimeAsync(0);
  expect(wait.value).toBe('poked');
});
