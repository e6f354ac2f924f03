/**
 * Lease engine vs graphile-worker: burn down N due rows with a no-op attempt (claim → no-op →
 * finish) and let graphile-worker 0.17.3 drain N no-op jobs on the same Postgres, in the same
 * run, configurations interleaved round by round so drift hits all of them alike. The lease
 * engine runs the path the poller ships (the poller's claim loop and slots, TaskLeaseRepository
 * built with the poller's group commit, the fair-share claim, the event outbox on), and again
 * with one of those costs removed at a time (fair share off, outbox off, group commit off), so
 * the table shows where the time goes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { makeWorkerUtils } from 'graphile-worker';
import { parseSettings } from '@app/config';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { loadTasks } from './lib/load-tasks';
import { DoneMessage, runWorkers } from './lib/spawn';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

export interface Config {
  key: string;
  label: string;
  kind: 'lease' | 'graphile';
  processes: number;
  env: NodeJS.ProcessEnv;
  /** Slow configurations drain fewer rows: the rate is what is compared, not the total time. */
  slow?: boolean;
  /** The `tasks_after_update` trigger (the event outbox) disabled for the run. */
  outboxOff?: boolean;
  /** A lease worker of another build (its absolute path); this build's by default. */
  worker?: string;
}

/** WORKER_SLOTS of each lease process: the engine claims as many rows as it has free slots. */
const SLOTS = 1000;
/** The poller's variables for the shipped path (their defaults but the slots). */
export const SHIPPED = { WORKER_SLOTS: String(SLOTS) };
/** Every terminal write alone, at the poller's default 64 slots. */
const PER_ROW = { WORKER_SLOTS: '64', WRITE_BATCH_WINDOW_MS: '0' };

/**
 * What a lease process runs with, read the way the worker reads it (the poller's settings from
 * the benchmark's environment and `env`), so the report cannot drift from the defaults.
 */
function workerSettings(env: NodeJS.ProcessEnv): Record<string, number> {
  const { worker, database } = parseSettings({
    ...process.env,
    ...env,
    DATABASE_URL: 'postgres://unused',
  });
  return {
    slots: worker.slots,
    writeBatchWindowMs: worker.writeBatchWindowMs,
    writeBatchMax: worker.writeBatchMax,
    poolPerProcess: database.poolSize,
  };
}

const CONFIGS: Config[] = [
  // The path the poller ships: its claim loop, the fair-share claim (CLAIM_FAIR_SHARE's default)
  // with its headroom, each task's end written by `finish` through the batcher
  // (WRITE_BATCH_WINDOW_MS 3, WRITE_BATCH_MAX 200), the event outbox's trigger on.
  ...[1, 2, 4].map((processes) => ({
    key: `lease-shipped-${processes}`,
    label: `lease engine as shipped (fair claim, group commit, outbox), ${processes} process${processes > 1 ? 'es' : ''}`,
    kind: 'lease' as const,
    processes,
    env: SHIPPED,
  })),
  // The shipped path with one cost removed, same processes and rows, same round.
  {
    key: 'lease-due-order-2',
    label: 'lease engine as shipped but the due-order claim (fair share off), 2 processes',
    kind: 'lease',
    processes: 2,
    env: { ...SHIPPED, CLAIM_FAIR_SHARE: 'false' },
  },
  {
    key: 'lease-no-outbox-2',
    label: 'lease engine as shipped but the outbox trigger off (no events), 2 processes',
    kind: 'lease',
    processes: 2,
    env: SHIPPED,
    outboxOff: true,
  },
  {
    key: 'lease-per-row-2',
    label: 'lease engine as shipped but one terminal write per row (no group commit), 2 processes',
    kind: 'lease',
    processes: 2,
    env: PER_ROW,
    slow: true,
  },
  {
    key: 'gw-default',
    label: 'graphile-worker 0.17.3, defaults (1 process, concurrency 1)',
    kind: 'graphile',
    processes: 1,
    env: { GW_MODE: 'default' },
    slow: true,
  },
  {
    key: 'gw-batched',
    label: 'graphile-worker 0.17.3, batched (local queue 500, batched completion, concurrency 24)',
    kind: 'graphile',
    processes: 1,
    env: { GW_MODE: 'batched' },
  },
];

/** The configurations whose claims the table breaks out. */
const CLAIM_BREAKDOWN = ['lease-shipped-1', 'lease-shipped-2', 'lease-due-order-2'];

type Round = Record<string, number>;

export const leaseEngineBench: Benchmark = {
  name: 'lease-engine',
  title: 'Lease engine burn-down vs graphile-worker',
  async run(ctx) {
    const rows = ctx.quick ? 5_000 : 20_000;
    const slowRows = ctx.quick ? 1_000 : 4_000;
    const bench = await createBenchDatabase(ctx.adminUrl, 'lease');
    const rounds: Round[] = [];
    try {
      const utils = await makeWorkerUtils({ connectionString: bench.url });
      try {
        await utils.migrate();
        for (let run = 0; run < ctx.runs; run++) {
          const round: Round = {};
          for (const config of CONFIGS) {
            const n = config.slow ? slowRows : rows;
            if (config.kind === 'lease') {
              const burn = await burnLease(bench, config, n);
              round[config.key] = burn.rate;
              round[`${config.key}:claimShare`] = burn.claimShare;
              round[`${config.key}:claimUs`] = burn.claimUsPerRow;
            } else {
              round[config.key] = await drainGraphile(bench, config, n, (specs) =>
                utils.addJobs(specs),
              );
            }
            ctx.log(
              `run ${run + 1}/${ctx.runs} ${config.key}: ${Math.round(round[config.key])} rows/s`,
            );
          }
          rounds.push(round);
        }
      } finally {
        await utils.release();
      }
    } finally {
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        rows,
        rowsForSlowConfigurations: slowRows,
        leaseWorker: {
          loop: "the poller's (ClaimLoopService, ServerSlots), claiming as many rows as slots are free",
          ...workerSettings(SHIPPED),
        },
        perRowWorker: workerSettings(PER_ROW),
        graphileBatched: {
          concurrency: 24,
          maxPoolSize: 25,
          localQueue: 500,
          completeJobBatchDelay: 0,
          failJobBatchDelay: 0,
        },
        timing:
          "lease: from the go signal (rows already loaded) to the last task's end written; " +
          'graphile-worker: from its first job to an empty jobs table',
      },
      rows: summarize(rounds),
      runs: rounds,
    };
  },
};

/** A lease run: its rate, and how much of it its claims took. */
export interface LeaseBurn {
  rate: number;
  /** The claims' wall time over the processes' run time (each process claims one at a time). */
  claimShare: number;
  /** The claims' wall time per claimed row, µs. */
  claimUsPerRow: number;
}

export async function burnLease(
  bench: BenchDatabase,
  config: Config,
  rows: number,
): Promise<LeaseBurn> {
  await bench.db.query('TRUNCATE tasks CASCADE');
  // Due over the last minute, in random order, like a backlog that built up.
  await loadTasks(bench.db, { count: rows, status: 'working', dueFromMs: -60_000, dueToMs: 0 });
  await settle(bench, 'tasks, task_leases');
  const trigger = (on: boolean): Promise<unknown> =>
    bench.db.query(`ALTER TABLE tasks ${on ? 'ENABLE' : 'DISABLE'} TRIGGER tasks_after_update`);
  if (config.outboxOff) await trigger(false);
  let done: DoneMessage[];
  try {
    done = await runWorkers(
      config.worker ?? 'workers/lease-burn.worker.js',
      config.processes,
      { ...config.env, DATABASE_URL: bench.url },
      () => allEnded(bench, config.key),
    );
  } finally {
    if (config.outboxOff) await trigger(true);
  }
  const left = await bench.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM task_rows WHERE next_attempt_at IS NOT NULL`,
  );
  const processed = done.reduce((sum, d) => sum + d.processed, 0);
  const lost = done.reduce((sum, d) => sum + d.lost, 0);
  if (Number(left[0].n) !== 0 || processed !== rows || lost !== 0) {
    throw new Error(
      `${config.key}: ${left[0].n} rows left, ${processed}/${rows} processed, ${lost} leases lost`,
    );
  }
  if (process.env.BENCH_VERBOSE) console.log(JSON.stringify(done));
  const claimMs = done.reduce((sum, d) => sum + (d.claimMs ?? 0), 0);
  const spanMs = Math.max(1, span(done));
  return {
    rate: (rows * 1000) / spanMs,
    claimShare: claimMs / (config.processes * spanMs),
    claimUsPerRow: (claimMs * 1000) / rows,
  };
}

/**
 * Resolves once no row has a lease row left (a task's end deletes it), asked every 20 ms: the
 * workers' engines, like pollers, do not know when the backlog is gone (a worker whose last claim
 * came back short waits for a wake-up), so the benchmark tells them to stop.
 */
async function allEnded(bench: BenchDatabase, key: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const left = await bench.db.query<{ any: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM task_leases) AS any',
    );
    if (!left[0].any) return;
    if (Date.now() > deadline) throw new Error(`${key}: rows still leased after 300 s`);
    await sleep(20);
  }
}

async function drainGraphile(
  bench: BenchDatabase,
  config: Config,
  jobs: number,
  addJobs: (specs: Array<{ identifier: string; payload: object }>) => Promise<unknown>,
): Promise<number> {
  for (let added = 0; added < jobs; added += 5_000) {
    const count = Math.min(5_000, jobs - added);
    await addJobs(Array.from({ length: count }, () => ({ identifier: 'noop', payload: {} })));
  }
  await settle(bench, 'graphile_worker._private_jobs');
  const done = await runWorkers('workers/graphile-burn.worker.js', config.processes, {
    ...config.env,
    GW_JOBS: String(jobs),
    DATABASE_URL: bench.url,
  });
  return rate(jobs, done);
}

/** Same starting line for every run: fresh statistics, no dead tuples, no checkpoint pending. */
async function settle(bench: BenchDatabase, table: string): Promise<void> {
  await bench.db.query(`VACUUM ANALYZE ${table}`);
  await bench.db.query('CHECKPOINT');
}

/** From the first worker's start to the last one's end, ms. */
function span(done: DoneMessage[]): number {
  return Math.max(...done.map((d) => d.endedAt)) - Math.min(...done.map((d) => d.startedAt));
}

function rate(rows: number, done: DoneMessage[]): number {
  return (rows * 1000) / Math.max(1, span(done));
}

function summarize(rounds: Round[]): ResultRow[] {
  const med = (f: (round: Round) => number): number => median(rounds.map(f));
  const result: ResultRow[] = CONFIGS.map((config) => ({
    metric: config.label,
    value: round(med((r) => r[config.key])),
    unit: 'rows/s',
  }));
  // Ratios are taken within each round (same run, same minute), then the median is reported.
  const shipped = CONFIGS.filter((c) => c.key.startsWith('lease-shipped-'));
  const best = (r: Round): number => Math.max(...shipped.map((c) => r[c.key]));
  const worst = (r: Round): number => Math.min(...shipped.map((c) => r[c.key]));
  const vsBatched = med((r) => best(r) / r['gw-batched']);
  const vsDefault = med((r) => worst(r) / r['gw-default']);
  // Fair share on against off, and the outbox on against off: where the time goes
  // (docs/leases.md, "Fair share"; docs/events.md).
  const fairRatio = med((r) => r['lease-shipped-2'] / r['lease-due-order-2']);
  const outboxRatio = med((r) => r['lease-shipped-2'] / r['lease-no-outbox-2']);
  const groupRatio = med((r) => r['lease-per-row-2'] / r['lease-shipped-2']);
  // Where a lease process's time goes: each claims one statement at a time, so a share near 1
  // means the run waited on its claims. The time per claimed row compares the two claims; it is
  // wall time, which with both cores busy includes a claim's wait for one (docs/benchmarks.md,
  // "Claims in the lease-engine run").
  const claimRows: ResultRow[] = CLAIM_BREAKDOWN.flatMap((key) => [
    {
      metric: `${key}: share of each process's time spent claiming`,
      value: round(med((r) => r[`${key}:claimShare`])),
      unit: '×',
    },
    {
      metric: `${key}: claiming's wall time per claimed row`,
      value: round(med((r) => r[`${key}:claimUs`])),
      unit: 'µs',
    },
  ]);
  result.push(
    {
      metric: 'ratio: best of lease-shipped-1/2/4 / graphile-worker batched',
      value: round(vsBatched),
      unit: '×',
      target: '≥ 1.0×',
      met: vsBatched >= 1,
    },
    {
      metric: 'ratio: worst of lease-shipped-1/2/4 / graphile-worker default',
      value: round(vsDefault),
      unit: '×',
      target: '≥ 2×',
      met: vsDefault >= 2,
    },
    {
      metric: 'ratio: fair-share claim / due-order claim, shipped path, 2 processes',
      value: round(fairRatio),
      unit: '×',
      target: '≥ 0.9× (at most 10% slower)',
      met: fairRatio >= 0.9,
    },
    {
      metric: 'ratio: outbox on / outbox off, shipped path, 2 processes',
      value: round(outboxRatio),
      unit: '×',
    },
    {
      metric: 'ratio: one write per row / group commit, shipped path, 2 processes',
      value: round(groupRatio),
      unit: '×',
    },
    ...claimRows,
  );
  return result;
}
