// Guards storeEnd's retry rule (docs/leases.md, "A call's end"): a write the database cannot
// serve is tried again while the claim holds, with pauses short enough for the lease to be
// renewed in time; past the lease it lands under our token while nobody claimed the row, a try
// whose reply was lost is found in the row, and only another claim ends it, at error level.
import { LeaseLostError } from '@app/common';
import pino from 'pino';
import { CallEnd, storeEnd } from './call-end';

const unavailable = () => new Error('Connection terminated');
const silent = pino({ level: 'silent' });

/** A call's end over `write`, whose lease is kept and never expires unless told. */
function end(overrides: Partial<CallEnd>): CallEnd {
  return {
    taskId: 't1',
    write: () => Promise.resolve(),
    writeIfStillOurs: () => Promise.reject(new Error('not expected')),
    keep: () => Promise.resolve(true),
    storedEarlier: () => Promise.resolve(false),
    leaseMs: 60_000,
    log: silent,
    status: 'completed',
    ...overrides,
  };
}

afterEach(() => jest.useRealTimers());

it('pauses at most a third of a short lease between tries, then stores the end', async () => {
  jest.useFakeTimers();
  let writes = 0;
  let keeps = 0;
  const stored = storeEnd(
    end({
      write: () => (++writes < 3 ? Promise.reject(unavailable()) : Promise.resolve()),
      keep: () => Promise.resolve(++keeps > 0),
      leaseMs: 300,
    }),
  );
  await jest.advanceTimersByTimeAsync(0);
  expect(writes).toBe(1);
  // The first pause is 250 ms by default; a 300 ms lease holds it to 100 ms.
  await jest.advanceTimersByTimeAsync(100);
  expect(writes).toBe(2);
  await jest.advanceTimersByTimeAsync(100);
  await stored;
  expect([writes, keeps]).toEqual([3, 2]);
});

it('past the lease, stores the end under our token once the database is back', async () => {
  jest.useFakeTimers();
  let late = 0;
  const stored = storeEnd(
    end({
      write: () => Promise.reject(unavailable()),
      keep: () => Promise.resolve(false),
      writeIfStillOurs: () => (++late < 3 ? Promise.reject(unavailable()) : Promise.resolve(true)),
    }),
  );
  await jest.advanceTimersByTimeAsync(250 + 500);
  await stored;
  expect(late).toBe(3);
});

it('a write the fence refused goes on under our token, with no renewal', async () => {
  let keeps = 0;
  let late = 0;
  await storeEnd(
    end({
      write: () => Promise.reject(new LeaseLostError('t1')),
      keep: () => Promise.resolve(++keeps > 0),
      writeIfStillOurs: () => Promise.resolve(++late > 0),
    }),
  );
  expect([keeps, late]).toEqual([0, 1]);
});

it('another claim on the row ends it with a lost lease, logged at error level', async () => {
  const errors: string[] = [];
  const log = pino({ level: 'error' }, { write: (line: string) => errors.push(line) });
  const taken = storeEnd(
    end({
      write: () => Promise.reject(new LeaseLostError('t1')),
      writeIfStillOurs: () => Promise.resolve(false),
      log,
      status: 'failed',
    }),
  );
  await expect(taken).rejects.toBeInstanceOf(LeaseLostError);
  expect(errors.map((line) => JSON.parse(line) as { msg: string; status: string })).toEqual([
    expect.objectContaining({
      msg: "the call's end could not be stored: the task is no longer this claim's",
      status: 'failed',
    }),
  ]);
});

it('any other error ends it at once, as it is', async () => {
  let late = 0;
  const refused = storeEnd(
    end({
      write: () => Promise.reject(new Error('value too long for type')),
      writeIfStillOurs: () => Promise.resolve(++late > 0),
    }),
  );
  await expect(refused).rejects.toThrow('value too long for type');
  expect(late).toBe(0);
});

it('a try whose reply was lost had ended the task: the end is kept as stored, not lost', async () => {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  let late = 0;
  // The write committed, its reply never came (a closed connection), and the lease row went
  // with the end: the renewal finds it gone, the row shows the end under this claim.
  await storeEnd(
    end({
      write: () => Promise.reject(unavailable()),
      keep: () => Promise.resolve(false),
      writeIfStillOurs: () => Promise.resolve(++late < 0),
      storedEarlier: () => Promise.resolve(true),
      log,
    }),
  );
  expect(late).toBe(0);
  expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
    "the call's end had been stored by a try whose reply was lost",
  ]);
});

it('a late write whose reply was lost is found stored on the next try, not taken for a lost end', async () => {
  jest.useFakeTimers();
  let late = 0;
  let asked = 0;
  const stored = storeEnd(
    end({
      write: () => Promise.reject(new LeaseLostError('t1')),
      // The late write lands, its reply is lost; the retry finds the token gone with the end.
      writeIfStillOurs: () =>
        ++late === 1 ? Promise.reject(unavailable()) : Promise.resolve(false),
      storedEarlier: () => Promise.resolve(++asked > 1),
    }),
  );
  await jest.advanceTimersByTimeAsync(250);
  await stored;
  expect([late, asked]).toEqual([2, 2]);
});
