// Guards the poller's start and stop order (docs/leases.md, "Graceful shutdown"): the periodic jobs start after registration and claiming, in their list's order, and stop after the drain and the wake-up, before the worker row is marked stopped and upstream closes.
import type { Provider } from '@nestjs/common';
import { PollerLifecycleService } from './poller-lifecycle.service';
import { BacklogSamplingService } from './upkeep/backlog-sampling.service';
import { CatalogSweepJob } from './upkeep/catalog-sweep.job';
import { DeadlineSweepJob } from './upkeep/deadline-sweep.job';
import { PERIODIC_JOBS, PeriodicJob } from './upkeep/periodic-job';
import { RetentionJob } from './upkeep/retention.job';
import { UPKEEP_PROVIDERS } from './upkeep/upkeep.providers';
import { EventRetentionJob } from './webhooks/event-retention.job';

type Args = ConstructorParameters<typeof PollerLifecycleService>;

/** A lifecycle over fakes that record each call in `calls`; `claiming` settles once it claims. */
function lifecycle(jobNames: string[], registerFailures: Error[] = []) {
  const calls: string[] = [];
  const record = (name: string) => (): Promise<void> => {
    calls.push(name);
    return Promise.resolve();
  };
  let claimed!: () => void;
  const claiming = new Promise<void>((resolve) => (claimed = resolve));
  const engine = (name: string) => ({
    stopClaiming: record(`${name}.stopClaiming`),
    drain: () => {
      calls.push(`${name}.drain`);
      return Promise.resolve(true);
    },
    inFlight: () => [],
    poke: () => undefined,
    abort: () => undefined,
  });
  const jobs: PeriodicJob[] = jobNames.map((name) => ({
    name,
    start: () => void calls.push(`${name}.start`),
    stop: record(`${name}.stop`),
  }));
  const args = [
    { worker: { drainTimeoutMs: 1000, writeBatchWindowMs: 0, writeBatchMax: 1 } },
    { start: () => void calls.push('pool.start'), close: record('pool.close') },
    { subscribe: () => void calls.push('catalog.subscribe'), close: record('catalog.close') },
    {
      register: () => {
        calls.push('worker.register');
        const failure = registerFailures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve();
      },
      stop: record('worker.stop'),
      deadAfterMs: 1,
    },
    { start: () => void calls.push('notify.start'), stop: record('notify.stop') },
    { start: () => void calls.push('tasks.start'), engine: engine('tasks') },
    { holdsUpstreamCall: () => false, checkHeldCalls: () => undefined },
    { batchWrites: () => undefined, flushWrites: () => Promise.resolve(), release: record('') },
    { notifyDue: record('fleet.notifyDue') },
    {
      start: () => void calls.push('webhooks.start'),
      close: record('webhooks.close'),
      engine: engine('webhooks'),
    },
    jobs,
    {
      info: (_: unknown, message?: string) => {
        if (message === 'worker claiming') claimed();
      },
      warn: () => undefined,
      fatal: () => undefined,
    },
    { close: record('push.close') },
  ] as unknown as Args;
  return { service: new PollerLifecycleService(...args), calls, claiming };
}

it('starts the periodic jobs last, in their order, once the worker is registered and claiming', async () => {
  const { service, calls, claiming } = lifecycle(['first', 'second', 'third']);
  service.onApplicationBootstrap();
  await claiming;
  expect(calls).toEqual([
    'catalog.subscribe',
    'pool.start',
    'worker.register',
    'notify.start',
    'tasks.start',
    'webhooks.start',
    'first.start',
    'second.start',
    'third.start',
  ]);
});

it('registers again while the database is unavailable, and claims only once registered', async () => {
  // As the driver says a refused connection and a database shutting down.
  const refused = (code: string) => Object.assign(new Error('unavailable'), { code });
  const { service, calls, claiming } = lifecycle(
    ['job'],
    [refused('ECONNREFUSED'), refused('57P03')],
  );
  service.onApplicationBootstrap();
  await claiming;
  expect(calls.slice(2)).toEqual([
    'worker.register',
    'worker.register',
    'worker.register',
    'notify.start',
    'tasks.start',
    'webhooks.start',
    'job.start',
  ]);
});

it('stops the jobs with both listeners after the drain and the wake-up, before the worker row and upstream', async () => {
  const { service, calls, claiming } = lifecycle(['first', 'second']);
  service.onApplicationBootstrap();
  await claiming;
  calls.length = 0;
  await service.beforeApplicationShutdown();
  const together = calls.slice(5, 9);
  expect(calls.slice(0, 5)).toEqual([
    'tasks.stopClaiming',
    'webhooks.stopClaiming',
    'tasks.drain',
    'webhooks.drain',
    'fleet.notifyDue',
  ]);
  expect([...together].sort()).toEqual([
    'first.stop',
    'notify.stop',
    'second.stop',
    'webhooks.close',
  ]);
  // Push subscriptions end before the connection layer closes (docs/connections.md, "Push").
  expect(calls.slice(9)).toEqual(['worker.stop', 'catalog.close', 'push.close', 'pool.close']);
});

it('lists the periodic jobs in the order the lifecycle has always started them', () => {
  const list = UPKEEP_PROVIDERS.find(
    (p: Provider): p is Extract<Provider, { provide: unknown }> =>
      typeof p === 'object' && 'provide' in p && p.provide === PERIODIC_JOBS,
  );
  expect(list && 'inject' in list ? list.inject : undefined).toEqual([
    BacklogSamplingService,
    RetentionJob,
    EventRetentionJob,
    CatalogSweepJob,
    DeadlineSweepJob,
  ]);
});
