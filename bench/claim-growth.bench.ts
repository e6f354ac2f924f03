/**
 * Claim cost as the table grows: p50/p99 latency of the real claim statement (50 rows a claim)
 * with 10k, 100k and 1M rows, 95% terminal. The due set stays the same size at every step:
 * each claimed batch is given back due now (one statement, not timed), as a poll would. The
 * due-order claim and the fair-share claim (100 principals) alternate within each run.
 */
import { performance } from 'node:perf_hooks';
import { Phase } from '@app/common';
import { TaskLeaseRepository } from '@app/persistence';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { loadTasks } from './lib/load-tasks';
import { median, quantile, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const CLAIM_ROWS = 50;
const DUE_ROWS = 500;
const TERMINAL_SHARE = 0.95;
const SIZES = [10_000, 100_000, 1_000_000];

interface SizeRun {
  size: number;
  /** The fair-share claim (docs/leases.md, "Fair share") instead of due order alone. */
  fair: boolean;
  p50Ms: number;
  p99Ms: number;
}

export const claimGrowthBench: Benchmark = {
  name: 'claim-growth',
  title: 'Claim latency as the table grows (95% terminal rows)',
  async run(ctx) {
    const claims = ctx.quick ? 300 : 1_000;
    const bench = await createBenchDatabase(ctx.adminUrl, 'growth', 2);
    const runs: SizeRun[] = [];
    try {
      // The due set first: these rows are claimed and re-queued throughout.
      await loadTasks(bench.db, {
        count: DUE_ROWS,
        status: 'working',
        dueFromMs: -60_000,
        dueToMs: 0,
      });
      let loaded = DUE_ROWS;
      for (const size of SIZES) {
        await grow(bench, size - loaded);
        loaded = size;
        for (let run = 0; run < ctx.runs; run++) {
          for (const fair of [false, true]) {
            const latencies = await measureClaims(bench, claims, fair);
            const sample = {
              size,
              fair,
              p50Ms: quantile(latencies, 0.5),
              p99Ms: quantile(latencies, 0.99),
            };
            runs.push(sample);
            ctx.log(
              `${size} rows, ${fair ? 'fair' : 'due order'}, run ${run + 1}: p50 ${sample.p50Ms.toFixed(2)} ms, p99 ${sample.p99Ms.toFixed(2)} ms`,
            );
          }
        }
      }
      const plan = await bench.db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS) SELECT task_id FROM task_leases
          WHERE lease_token IS NULL AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT ${CLAIM_ROWS} FOR UPDATE SKIP LOCKED`,
      );
      ctx.log(
        `plan of the claim's scan at 1M rows:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`,
      );
    } finally {
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        claimsPerRun: claims,
        rowsPerClaim: CLAIM_ROWS,
        dueRows: DUE_ROWS,
        terminalShare: TERMINAL_SHARE,
        activeNotDue: 'the rest of the 5%: due within the next hour',
        loading: 'generate_series, then VACUUM ANALYZE',
      },
      rows: summarize(runs),
      runs,
    };
  },
};

/** Adds `count` rows: 95% terminal, the rest active and due within the next hour. */
async function grow(bench: BenchDatabase, count: number): Promise<void> {
  const terminal = Math.round(count * TERMINAL_SHARE);
  await loadTasks(bench.db, { count: terminal, status: 'completed' });
  await loadTasks(bench.db, {
    count: count - terminal,
    status: 'working',
    dueFromMs: 60_000,
    dueToMs: 3_600_000,
  });
  await bench.db.query('VACUUM ANALYZE tasks');
  await bench.db.query('VACUUM ANALYZE task_leases');
  await bench.db.query('CHECKPOINT');
}

/** Times `claims` claims of CLAIM_ROWS; after each, the rows are given back due now. */
async function measureClaims(
  bench: BenchDatabase,
  claims: number,
  fair: boolean,
): Promise<number[]> {
  const leases = new TaskLeaseRepository(bench.db);
  const latencies: number[] = [];
  for (let i = 0; i < claims; i++) {
    const started = performance.now();
    const claimed = await leases.claim({
      workerId: 'bench-growth',
      limit: CLAIM_ROWS,
      phases: [Phase.Poll],
      leaseMs: 60_000,
      deadWorkerAfterMs: 30_000,
      fairShare: fair ? { weights: new Map<string, number>() } : undefined,
    });
    latencies.push(performance.now() - started);
    if (claimed.length !== CLAIM_ROWS)
      throw new Error(`claimed ${claimed.length}, expected ${CLAIM_ROWS}`);
    await bench.db.query(
      `UPDATE task_leases SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
              next_attempt_at = now()
         FROM unnest($1::text[], $2::uuid[]) AS u(id, token)
        WHERE task_leases.task_id = u.id AND task_leases.lease_token = u.token`,
      [claimed.map((c) => c.lease.taskId), claimed.map((c) => c.lease.token)],
    );
  }
  return latencies;
}

function summarize(runs: SizeRun[]): ResultRow[] {
  const at = (size: number, fair: boolean, key: 'p50Ms' | 'p99Ms'): number =>
    median(runs.filter((r) => r.size === size && r.fair === fair).map((r) => r[key]));
  const rows: ResultRow[] = [];
  for (const fair of [false, true]) {
    const name = fair ? 'fair-share claim' : 'claim';
    for (const size of SIZES) {
      for (const [label, key] of [
        ['p50', 'p50Ms'],
        ['p99', 'p99Ms'],
      ] as const) {
        rows.push({
          metric: `${name} of ${CLAIM_ROWS}, ${size.toLocaleString('en')} rows: ${label}`,
          value: round(at(size, fair, key)),
          unit: 'ms',
        });
      }
    }
    const ratio = at(SIZES[SIZES.length - 1], fair, 'p99Ms') / at(SIZES[0], fair, 'p99Ms');
    rows.push({
      metric: `${name}: p99 at 1M / p99 at 10k`,
      value: round(ratio),
      unit: '×',
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    });
  }
  return rows;
}
