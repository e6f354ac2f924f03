// Guards invariant 6 while the database refuses the handle write for longer than a lease
// (docs/leases.md, "Remote handles"): while it is unavailable the claim is renewed, and past the
// lease it is waited for, however long, instead of the handle being given up; a write refused
// for another reason keeps no claim and keeps the old bound.
import { LeaseLostError, RemoteHandle } from '@app/common';
import type { ClaimedTask, TaskLeaseRepository } from '@app/persistence';
import pino from 'pino';
import type { ItemScope } from './item-scope';
import { RemoteHandleWriter } from './remote-handle.writer';

const LEASE_MS = 3000;
const HANDLE: RemoteHandle = { remoteTaskId: 'job-1' };
const diskFull = (): Error => Object.assign(new Error('could not extend file'), { code: '53100' });
const refused = (): Error => Object.assign(new Error('invalid input'), { code: '22P02' });

/** What the fake repository does; each answer is a function of the call's time. */
interface Fake {
  recordSubmitted: () => Promise<void>;
  renewWatchingCancel: () => Promise<'renewed'>;
  recordSubmittedIfStillOurs: () => Promise<boolean>;
  handleStored?: () => Promise<boolean>;
}

function writer(fake: Fake): {
  store: () => Promise<void>;
  errors: () => unknown[];
  cancels: () => number;
} {
  const errors: unknown[] = [];
  let cancels = 0;
  const log = pino({ level: 'silent' });
  log.error = (obj: unknown) => void errors.push(obj);
  const scope = {
    log,
    server: { name: 'demo' },
    leaseExpiresAtMs: Date.now() + LEASE_MS,
  } as unknown as ItemScope;
  const leases = {
    handleStored: () => Promise.resolve(false),
    ...fake,
  } as unknown as TaskLeaseRepository;
  const handles = new RemoteHandleWriter(leases, LEASE_MS, () => {
    cancels += 1;
    return Promise.resolve();
  });
  const item = { id: 'task-1', lease: { taskId: 'task-1', token: 't' } } as ClaimedTask;
  return {
    store: () => handles.store(item, HANDLE, undefined, 0, scope),
    errors: () => errors,
    cancels: () => cancels,
  };
}

/** Runs `work` to its end under fake timers, a tick of 50 ms at a time. */
async function settle<T>(work: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let outcome: { value?: T; error?: unknown } | undefined;
  work.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  for (let i = 0; i < 10_000 && !outcome; i++) await jest.advanceTimersByTimeAsync(50);
  if (!outcome) throw new Error('never settled');
  return outcome;
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('renews the lease every lease/3 while the write is refused, and stores the handle once it lands', async () => {
  const landsAt = Date.now() + 4 * LEASE_MS;
  const renewals: number[] = [];
  const { store, errors } = writer({
    recordSubmitted: () => (Date.now() >= landsAt ? Promise.resolve() : Promise.reject(diskFull())),
    renewWatchingCancel: () => {
      renewals.push(Date.now());
      return Promise.resolve('renewed');
    },
    recordSubmittedIfStillOurs: () => Promise.reject(new Error('not reached while renewed')),
  });
  const started = Date.now();
  expect(await settle(store())).toEqual({ value: undefined });
  expect(Date.now()).toBeGreaterThanOrEqual(landsAt);
  // Never a gap of a whole lease between renewals: the claim stayed ours throughout.
  const gaps = [renewals[0] - started, ...renewals.slice(1).map((at, i) => at - renewals[i])];
  expect(renewals.length).toBeGreaterThanOrEqual(4);
  expect(Math.max(...gaps)).toBeLessThan(LEASE_MS);
  expect(errors()).toEqual([]);
});

it('waits out a database that stays unavailable past the lease, however long, then stores the handle', async () => {
  const backAt = Date.now() + 10 * LEASE_MS;
  const { store, errors, cancels } = writer({
    recordSubmitted: () => Promise.reject(diskFull()),
    renewWatchingCancel: () => Promise.reject(diskFull()),
    recordSubmittedIfStillOurs: () =>
      Date.now() >= backAt ? Promise.resolve(true) : Promise.reject(diskFull()),
  });
  expect(await settle(store())).toEqual({ value: undefined });
  expect(Date.now()).toBeGreaterThanOrEqual(backAt);
  expect([errors(), cancels()]).toEqual([[], 0]);
});

it('does not keep the claim of a write refused for another reason, and gives up one lease past it, leaving the upstream task running', async () => {
  let renewals = 0;
  const { store, errors, cancels } = writer({
    recordSubmitted: () => Promise.reject(refused()),
    renewWatchingCancel: () => {
      renewals += 1;
      return Promise.resolve('renewed');
    },
    recordSubmittedIfStillOurs: () => Promise.reject(refused()),
  });
  const started = Date.now();
  const { error } = await settle(store());
  expect(error).toBeInstanceOf(LeaseLostError);
  expect(renewals).toBe(0);
  expect(Date.now() - started).toBeLessThan(3 * LEASE_MS);
  expect(errors()).toHaveLength(1);
  expect(cancels()).toBe(0);
});

it('cancels the upstream task when the row is proven not to hold the handle', async () => {
  const { store, errors, cancels } = writer({
    recordSubmitted: () => Promise.reject(new LeaseLostError('task-1')),
    renewWatchingCancel: () => Promise.resolve('renewed'),
    recordSubmittedIfStillOurs: () => Promise.resolve(false),
    handleStored: () => Promise.resolve(false),
  });
  const { error } = await settle(store());
  expect(error).toBeInstanceOf(LeaseLostError);
  expect(cancels()).toBe(1);
  expect(errors()).toHaveLength(2);
});
