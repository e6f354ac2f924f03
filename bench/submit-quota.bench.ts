/**
 * What the submit quotas cost in the database: the task insert alone (as before quotas) against
 * the quota-checked insert (bucket row lock, active count, insert, one transaction), for a user
 * with a few active tasks and for one with 5,000 (the count reads up to the limit), one submit at
 * a time (latency); then 8 concurrent submitters of ONE user (serialised by that user's bucket
 * row) against 8 users (not serialised), as submits/s.
 */
import { performance } from 'node:perf_hooks';
import { Contract } from '@app/common';
import { SubmitQuota, TaskRepository } from '@app/persistence';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { median, quantile, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const HEAVY_ACTIVE = 5_000;
const CONCURRENCY = 8;
/**
 * The task insert alone, as a submit was before quotas (the product no longer has it; #37): the
 * baseline the quota-checked submit is compared with. A taken key inserts nothing.
 */
const INSERT_ALONE_SQL = `
INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, input)
VALUES ('task_' || md5(random()::text), $1, 'bench', 'bench', 'ordinary', 'srv', '{"n":1}'::jsonb)
RETURNING *, now() AS next_attempt_at`;

const QUOTA: SubmitQuota = {
  submitsPerMinute: 100_000_000,
  maxActiveTasks: 10_000,
  activeRetryAfterSeconds: 5,
};

interface Run {
  plainP50Ms: number;
  plainP99Ms: number;
  quotaP50Ms: number;
  quotaP99Ms: number;
  heavyP50Ms: number;
  heavyP99Ms: number;
  oneUserPerSecond: number;
  manyUsersPerSecond: number;
}

export const submitQuotaBench: Benchmark = {
  name: 'submit-quota',
  title: 'Submit quota check: the insert alone vs quota-checked, one user vs many',
  async run(ctx) {
    const submits = ctx.quick ? 300 : 1_000;
    const runs: Run[] = [];
    for (let r = 0; r < ctx.runs; r++) {
      const bench = await createBenchDatabase(ctx.adminUrl, 'quota', CONCURRENCY + 1);
      try {
        runs.push(await oneRun(bench, submits, r, ctx.log));
      } finally {
        await bench.drop();
      }
    }
    return {
      status: 'ok',
      settings: {
        submitsPerPhase: submits,
        heavyUserActiveTasks: HEAVY_ACTIVE,
        maxActiveTasks: QUOTA.maxActiveTasks,
        concurrentSubmitters: CONCURRENCY,
        path: 'TaskRepository.create on a pg pool, no HTTP (the API adds the same round trips)',
      },
      rows: summarize(runs),
      runs,
    };
  },
};

async function oneRun(
  bench: BenchDatabase,
  submits: number,
  run: number,
  log: (message: string) => void,
): Promise<Run> {
  const tasks = new TaskRepository(bench.db);
  const submit = (userId: string, quota?: SubmitQuota) =>
    quota
      ? tasks.create(newTask(userId), quota)
      : bench.db.query(INSERT_ALONE_SQL, [userId], 'bench_insert_alone');
  // Warm-up: JIT, the pool's connections, the prepared statements.
  for (let i = 0; i < 100; i++) await submit(`warm-${i % 10}`, QUOTA);
  const plain = await timed(submits, (i) => submit(`plain-${i % 50}`));
  const quota = await timed(submits, (i) => submit(`light-${i % 50}`, QUOTA));
  await bench.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, input)
     SELECT 'heavy_' || g, 'heavy', 't', 'bench', 'ordinary', 'srv', '{}'
       FROM generate_series(1, $1) AS g`,
    [HEAVY_ACTIVE],
  );
  await bench.db.query('VACUUM ANALYZE tasks');
  await bench.db.query('VACUUM ANALYZE task_leases');
  const heavy = await timed(submits, () => submit('heavy', QUOTA));
  const oneUser = await throughput(submits, () => submit('together', QUOTA));
  const manyUsers = await throughput(submits, (worker) => submit(`apart-${worker}`, QUOTA));
  const result: Run = {
    plainP50Ms: quantile(plain, 0.5),
    plainP99Ms: quantile(plain, 0.99),
    quotaP50Ms: quantile(quota, 0.5),
    quotaP99Ms: quantile(quota, 0.99),
    heavyP50Ms: quantile(heavy, 0.5),
    heavyP99Ms: quantile(heavy, 0.99),
    oneUserPerSecond: oneUser,
    manyUsersPerSecond: manyUsers,
  };
  log(
    `run ${run + 1}: insert alone p50 ${round(result.plainP50Ms)} ms, checked p50 ` +
      `${round(result.quotaP50Ms)} ms, checked at ${HEAVY_ACTIVE} active p50 ` +
      `${round(result.heavyP50Ms)} ms; ${CONCURRENCY} submitters: one user ` +
      `${Math.round(oneUser)}/s, ${CONCURRENCY} users ${Math.round(manyUsers)}/s`,
  );
  return result;
}

function newTask(userId: string) {
  return {
    userId,
    threadId: 'bench',
    toolset: 'bench',
    contract: Contract.Ordinary,
    server: 'srv',
    input: { n: 1 },
  };
}

/** Latencies (ms) of `count` submits, one at a time. */
async function timed(count: number, submit: (i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await submit(i);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** Submits/s of CONCURRENCY loops sharing `count` submits. */
async function throughput(
  count: number,
  submit: (worker: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next++ < count) await submit(worker);
    }),
  );
  return (count * 1000) / (performance.now() - started);
}

function summarize(runs: Run[]): ResultRow[] {
  const ms = (pick: (run: Run) => number) => round(median(runs.map(pick)));
  return [
    { metric: 'task insert alone (no quota), p50', value: ms((r) => r.plainP50Ms), unit: 'ms' },
    { metric: 'task insert alone (no quota), p99', value: ms((r) => r.plainP99Ms), unit: 'ms' },
    { metric: 'quota-checked insert, few active, p50', value: ms((r) => r.quotaP50Ms), unit: 'ms' },
    { metric: 'quota-checked insert, few active, p99', value: ms((r) => r.quotaP99Ms), unit: 'ms' },
    {
      metric: `quota-checked insert, ${HEAVY_ACTIVE} active, p50`,
      value: ms((r) => r.heavyP50Ms),
      unit: 'ms',
    },
    {
      metric: `quota-checked insert, ${HEAVY_ACTIVE} active, p99`,
      value: ms((r) => r.heavyP99Ms),
      unit: 'ms',
    },
    {
      metric: `${CONCURRENCY} concurrent submitters, one user (serialised)`,
      value: Math.round(median(runs.map((r) => r.oneUserPerSecond))),
      unit: 'submits/s',
    },
    {
      metric: `${CONCURRENCY} concurrent submitters, ${CONCURRENCY} users`,
      value: Math.round(median(runs.map((r) => r.manyUsersPerSecond))),
      unit: 'submits/s',
    },
  ];
}
