// Guards storeEnd's retry rule (docs/leases.md, "A call's end"): a write the database cannot
// serve is tried again while the claim holds, with pauses short enough for the lease to be
// renewed in time; a lost claim ends it at error level.
import { LeaseLostError } from '@app/common';
import pino from 'pino';
import { storeEnd } from './call-end';

const unavailable = () => new Error('Connection terminated');
const silent = pino({ level: 'silent' });

afterEach(() => jest.useRealTimers());

it('pauses at most a third of a short lease between tries, then stores the end', async () => {
  jest.useFakeTimers();
  let writes = 0;
  let keeps = 0;
  const stored = storeEnd({
    write: () => (++writes < 3 ? Promise.reject(unavailable()) : Promise.resolve()),
    keep: () => Promise.resolve(++keeps > 0),
    leaseMs: 300,
    log: silent,
    status: 'completed',
  });
  await jest.advanceTimersByTimeAsync(0);
  expect(writes).toBe(1);
  // The first pause is 250 ms by default; a 300 ms lease holds it to 100 ms.
  await jest.advanceTimersByTimeAsync(100);
  expect(writes).toBe(2);
  await jest.advanceTimersByTimeAsync(100);
  await stored;
  expect([writes, keeps]).toEqual([3, 2]);
});

it('stops when the claim is gone, and on a write the fence refused', async () => {
  const gone = storeEnd({
    write: () => Promise.reject(unavailable()),
    keep: () => Promise.resolve(false),
    leaseMs: 60_000,
    log: silent,
    status: 'completed',
  });
  await expect(gone).rejects.toThrow('Connection terminated');
  let keeps = 0;
  const fenced = storeEnd({
    write: () => Promise.reject(new LeaseLostError('t1')),
    keep: () => Promise.resolve(++keeps > 0),
    leaseMs: 60_000,
    log: silent,
    status: 'failed',
  });
  await expect(fenced).rejects.toBeInstanceOf(LeaseLostError);
  expect(keeps).toBe(0);
});
