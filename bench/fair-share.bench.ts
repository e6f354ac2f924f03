/**
 * Fair share under a flood (docs/leases.md, "Fair share"): a noisy principal has 50,000 due tasks
 * while a quiet one submits one task every QUIET_EVERY_MS. Two claimers (own pools, the real
 * claim through TaskLeaseRepository) of SLOTS slots each run every claimed task for about
 * TASK_MS and
 * end it with a fenced write, claiming again whenever a slot frees, and every IDLE_MS while idle
 * (standing in for NOTIFY). The quiet principal's due lag (the database's claim time minus the
 * task's due time, from the claim itself) is measured alone and under the flood, with fair share
 * on, in the same run. With fair share a claimer keeps the shipped FAIR_SHARE_HEADROOM, as the
 * poller does (claim-loop.service.ts: the claim's open rows are its free slots less the
 * headroom); the flood with the headroom off and with fair share off is measured too, for
 * contrast.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'pg';
import { Phase, TaskStatus } from '@app/common';
import { DEFAULT_HEADROOM } from '@app/config';
import { ClaimedTask, Database, TaskLeaseRepository } from '@app/persistence';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { median, quantile, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const FLOOD = 50_000;
const CLAIMERS = 2;
const SLOTS = 32;
const TASK_MS = 1000;
const IDLE_MS = 20;
const QUIET_EVERY_MS = 100;
const WARMUP_MS = 2 * TASK_MS;

type Scenario = 'alone' | 'flood-fair' | 'flood-fair-no-headroom' | 'flood-due-order';

/** The claimers' FAIR_SHARE_HEADROOM in a scenario; null: due order alone. */
function headroomOf(scenario: Scenario): number | null {
  if (scenario === 'flood-due-order') return null;
  return scenario === 'flood-fair-no-headroom' ? 0 : DEFAULT_HEADROOM;
}

interface ScenarioRun {
  scenario: Scenario;
  quietSubmitted: number;
  quietClaimed: number;
  p50Ms: number;
  p99Ms: number;
  noisyClaimed: number;
  /** Median wall time of one claim statement in the scenario. */
  claimP50Ms: number;
  claims: number;
}

export const fairShareBench: Benchmark = {
  name: 'fair-share',
  title: 'Fair share: a quiet principal beside a 50,000-task flood',
  async run(ctx) {
    const windowMs = ctx.quick ? 5_000 : 15_000;
    const bench = await createBenchDatabase(ctx.adminUrl, 'fair', 4);
    const runs: ScenarioRun[] = [];
    try {
      for (let run = 0; run < ctx.runs; run++) {
        const scenarios = ['alone', 'flood-fair', 'flood-fair-no-headroom', 'flood-due-order'];
        for (const scenario of scenarios as Scenario[]) {
          const result = await runScenario(bench, scenario, windowMs);
          runs.push(result);
          ctx.log(
            `run ${run + 1} ${scenario}: quiet p50 ${result.p50Ms.toFixed(1)} ms, p99 ` +
              `${result.p99Ms.toFixed(1)} ms (${result.quietClaimed}/${result.quietSubmitted} ` +
              `claimed), noisy claimed ${result.noisyClaimed}, ${result.claims} claims, claim ` +
              `p50 ${result.claimP50Ms.toFixed(1)} ms`,
          );
        }
      }
    } finally {
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        flood: FLOOD,
        claimers: CLAIMERS,
        slotsPerClaimer: SLOTS,
        headroom: DEFAULT_HEADROOM,
        taskMs: `${TASK_MS} × uniform(0.5, 1.5)`,
        idleClaimEveryMs: IDLE_MS,
        quietSubmitEveryMs: QUIET_EVERY_MS,
        windowMs,
        warmupMs: WARMUP_MS,
        dueLag: 'claim statement now() minus the row due time, from the claim (database clock)',
      },
      rows: summarize(runs),
      runs,
    };
  },
};

async function runScenario(
  bench: BenchDatabase,
  scenario: Scenario,
  windowMs: number,
): Promise<ScenarioRun> {
  await bench.db.query('TRUNCATE tasks CASCADE');
  if (scenario !== 'alone') {
    await bench.db.query(
      `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
       SELECT 'task_' || md5(random()::text || g), 'noisy', 'thread-1', 'demo-sync', 'sync-call', 'demo',
              'queued', '{}'::jsonb
         FROM generate_series(1, $1::int) AS g`,
      [FLOOD],
    );
    await bench.db.query(`UPDATE task_leases SET next_attempt_at = now() - interval '1 minute'`);
  }
  await bench.db.query('VACUUM ANALYZE tasks');
  await bench.db.query('VACUUM ANALYZE task_leases');
  const headroom = headroomOf(scenario);
  let stop = false;
  const quietLags: number[] = [];
  let noisyClaimed = 0;
  const onClaim = (items: ClaimedTask[]): void => {
    for (const item of items) {
      if (item.userId === 'quiet') quietLags.push(Math.max(0, item.dueLagSeconds) * 1000);
      else noisyClaimed += 1;
    }
  };
  const claimMs: number[] = [];
  const claimers = Array.from({ length: CLAIMERS }, (_, i) =>
    claimer(bench.url, `fair-bench-${i}`, headroom, onClaim, claimMs, () => stop),
  );
  // The flood is under way before the quiet principal starts: at the very start every slot is
  // taken at once and none frees for half a task time, which no share can shorten.
  await sleep(WARMUP_MS);
  let quietSubmitted = 0;
  const submitter = (async () => {
    const started = Date.now();
    while (Date.now() - started < windowMs) {
      await bench.db.query(
        `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
         VALUES ('task_' || md5(random()::text || $1), 'quiet', 'thread-1', 'demo-sync', 'sync-call', 'demo',
                 'queued', '{}'::jsonb)`,
        [quietSubmitted],
      );
      quietSubmitted += 1;
      await sleep(QUIET_EVERY_MS);
    }
  })();
  await submitter;
  // The last quiet tasks get one more idle period and one task time to be claimed.
  await sleep(IDLE_MS + TASK_MS);
  stop = true;
  await Promise.all(claimers);
  // A quiet task never claimed in the window counts with its age at the end.
  const unclaimed = await bench.db.query<{ age_ms: number }>(
    `SELECT extract(epoch FROM now() - created_at) * 1000 AS age_ms
       FROM task_rows WHERE user_id = 'quiet' AND claim_count = 0`,
  );
  const lags = [...quietLags, ...unclaimed.map((row) => Number(row.age_ms))];
  return {
    scenario,
    quietSubmitted,
    quietClaimed: quietLags.length,
    p50Ms: quantile(lags, 0.5),
    p99Ms: quantile(lags, 0.99),
    noisyClaimed,
    claimP50Ms: quantile(claimMs, 0.5),
    claims: claimMs.length,
  };
}

/**
 * One claimer: claims into its free slots, runs each task for TASK_MS, ends it, repeats. With
 * fair share (`headroom` not null) the claim's open rows are its free slots less `headroom`.
 */
async function claimer(
  url: string,
  workerId: string,
  headroom: number | null,
  onClaim: (items: ClaimedTask[]) => void,
  claimMs: number[],
  stopped: () => boolean,
): Promise<void> {
  // jit=off as on the apps' connections (libs/persistence/src/data-source.ts): JIT compiled the
  // fair claim for about 500 ms a statement here.
  const pool = new Pool({
    connectionString: url,
    max: 3,
    application_name: workerId,
    options: '-c jit=off',
  });
  // An idle client's lost connection is a pool 'error' event: without a listener it ends the run.
  pool.on('error', () => undefined);
  const leases = new TaskLeaseRepository(new Database(pool));
  let inflight = 0;
  let freed: () => void = () => undefined;
  const running: Promise<void>[] = [];
  try {
    while (!stopped()) {
      const free = SLOTS - inflight;
      if (free === 0) {
        await new Promise<void>((resolve) => (freed = resolve));
        continue;
      }
      const started = performance.now();
      const items = await leases.claim({
        workerId,
        limit: free,
        phases: [Phase.Submit],
        leaseMs: 60_000,
        deadWorkerAfterMs: 30_000,
        fairShare:
          headroom === null
            ? undefined
            : { weights: new Map<string, number>(), open: Math.max(0, free - headroom) },
      });
      claimMs.push(performance.now() - started);
      onClaim(items);
      for (const item of items) {
        inflight += 1;
        running.push(
          (async () => {
            // Durations spread over 0.5 to 1.5 × TASK_MS: equal ones kept every slot freeing in
            // the same instant once a second, and a newcomer waited for that wave (p50 460 ms).
            await sleep(TASK_MS * (0.5 + Math.random()));
            await leases.finish(item.lease, { status: TaskStatus.Completed });
            inflight -= 1;
            freed();
          })(),
        );
      }
      // As the poller's engine: at once again only after a full claim. One the headroom cut short
      // would find the same headroom at once; it waits for a slot to free, or the next poke.
      if (items.length < free) {
        await Promise.race([sleep(IDLE_MS), new Promise<void>((r) => (freed = () => r()))]);
      }
    }
    await Promise.all(running);
  } finally {
    await pool.end();
  }
}

function summarize(runs: ScenarioRun[]): ResultRow[] {
  const med = (scenario: Scenario, key: 'p50Ms' | 'p99Ms'): number =>
    median(runs.filter((r) => r.scenario === scenario).map((r) => r[key]));
  const alone = med('alone', 'p99Ms');
  const flood = med('flood-fair', 'p99Ms');
  const ratio = flood / Math.max(alone, 0.001);
  const noHeadroom = med('flood-fair-no-headroom', 'p99Ms');
  const noisy = (scenario: Scenario): number =>
    median(runs.filter((r) => r.scenario === scenario).map((r) => r.noisyClaimed));
  return [
    { metric: 'quiet due lag alone: p50', value: round(med('alone', 'p50Ms')), unit: 'ms' },
    { metric: 'quiet due lag alone: p99', value: round(alone), unit: 'ms' },
    {
      metric: 'quiet due lag beside the flood, fair share: p50',
      value: round(med('flood-fair', 'p50Ms')),
      unit: 'ms',
    },
    {
      metric: 'quiet due lag beside the flood, fair share: p99',
      value: round(flood),
      unit: 'ms',
      target: '< 1000 ms',
      met: flood < 1000,
    },
    {
      metric: 'quiet p99 beside the flood / quiet p99 alone',
      value: round(ratio),
      unit: '×',
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    },
    {
      metric: 'one claim statement beside the flood, fair share: p50',
      value: round(
        median(runs.filter((r) => r.scenario === 'flood-fair').map((r) => r.claimP50Ms)),
      ),
      unit: 'ms',
    },
    {
      metric: 'one claim statement beside the flood, due order alone: p50',
      value: round(
        median(runs.filter((r) => r.scenario === 'flood-due-order').map((r) => r.claimP50Ms)),
      ),
      unit: 'ms',
    },
    {
      metric:
        'quiet due lag beside the flood, fair share without headroom (FAIR_SHARE_HEADROOM=0): p99',
      value: round(noHeadroom),
      unit: 'ms',
    },
    {
      metric: 'quiet p99 beside the flood without headroom / quiet p99 alone',
      value: round(noHeadroom / Math.max(alone, 0.001)),
      unit: '×',
    },
    {
      // The headroom's cost: the slots kept free while the quiet principal has nothing due.
      metric: 'flood tasks claimed with headroom / without',
      value: round(noisy('flood-fair') / Math.max(noisy('flood-fair-no-headroom'), 1)),
      unit: '×',
    },
    {
      metric: 'quiet due lag beside the flood, due order alone (fair share off): p99',
      value: round(med('flood-due-order', 'p99Ms')),
      unit: 'ms',
    },
  ];
}
