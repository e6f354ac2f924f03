/**
 * graphile-worker 0.17 draining no-op jobs, for the lease-engine comparison. Spawned by
 * lease-engine.bench.ts with DATABASE_URL, GW_MODE (`default` | `batched`) and GW_JOBS.
 *
 * `default` is graphile-worker with its defaults (concurrency 1). `batched` is the configuration
 * of graphile-worker's own performance page: 24 concurrent jobs, a pool of 25, a local queue of
 * 500 and batched completion (`completeJobBatchDelay: 0`, `failJobBatchDelay: 0`).
 */
import { Client } from 'pg';
import { Logger, RunnerOptions, run } from 'graphile-worker';
import { nextParentMessage, runWorker, send } from '../lib/ipc';
import { Signal } from '../lib/signal';
import { sleep } from '../lib/stats';

const silent = new Logger(() => () => undefined);

runWorker(async () => {
  const connectionString = process.env.DATABASE_URL;
  const mode = process.env.GW_MODE ?? 'default';
  const jobs = Number(process.env.GW_JOBS);
  let executed = 0;
  let firstAt = 0;
  const allExecuted = new Signal();
  const options: RunnerOptions = {
    connectionString,
    noHandleSignals: true,
    logger: silent,
    taskList: {
      noop: () => {
        if (executed === 0) firstAt = Date.now();
        if (++executed === jobs) allExecuted.fire();
      },
    },
    ...(mode === 'batched'
      ? {
          concurrency: 24,
          maxPoolSize: 25,
          preset: {
            worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
          },
        }
      : {}),
  };
  const probe = new Client({ connectionString });
  // A connection lost between statements is an 'error' event: the next query fails on its own.
  probe.on('error', () => undefined);
  await probe.connect();
  send({ type: 'ready' });
  await nextParentMessage('go');
  const startedAt = Date.now();
  const executedAll = allExecuted.wait();
  const runner = await run(options);
  await executedAll;
  // Batched completion commits after the last job ran: the drain ends when the table is empty.
  while (
    Number(
      (await probe.query(`SELECT count(*) AS n FROM graphile_worker._private_jobs`)).rows[0].n,
    ) > 0
  ) {
    await sleep(2);
  }
  const endedAt = Date.now();
  await runner.stop();
  await probe.end();
  send({ type: 'done', startedAt: firstAt || startedAt, endedAt, processed: executed, lost: 0 });
});
