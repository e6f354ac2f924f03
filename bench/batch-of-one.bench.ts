/**
 * A batch of one against the row-by-row statement (#37): does a fenced write that goes through
 * the group-commit batcher alone (write-batcher.ts; the batch statement with one JSON row, its
 * lease row locked in the `l` CTE) cost more than the row-by-row statement it replaced (the
 * lease row written by task ID and token, plain parameters)? One connection claims every row,
 * then writes them one at a time, each write awaited before the next, the four kinds
 * interleaved row by row (terminal and poll write, each both ways) so drift hits them alike. Per
 * kind: the wall time of the write as the caller sees it and the backend's CPU from /proc around
 * it. The row-by-row statements are kept here, as they were before #37, as the reference.
 */
import { Phase, TaskSnapshot, TaskStatus } from '@app/common';
import { Database, TaskLease, TaskLeaseRepository } from '@app/persistence';
import { createBenchDatabase } from './lib/bench-db';
import { loadTasks } from './lib/load-tasks';
import { cpuSeconds } from './lib/poller-harness';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const DONE: TaskSnapshot = { status: TaskStatus.Completed };
const WORKING: TaskSnapshot = { status: TaskStatus.Working };
const POLL_DELAY_MS = 60_000;

/** The terminal write as one row-by-row statement (fenced-write.sql.ts before #37). */
const ROW_BY_ROW_FINISH_SQL = `WITH u AS (DELETE FROM task_leases
   WHERE task_leases.task_id = $1 AND task_leases.lease_token = $2
     AND task_leases.lease_expires_at > now()
  RETURNING task_leases.task_id AS id, task_leases.claim_count)
UPDATE tasks SET status = $3,
       result = CASE WHEN $4::boolean THEN $5::jsonb ELSE tasks.result END,
       result_preview = CASE WHEN $4::boolean THEN $6 ELSE tasks.result_preview END,
       result_truncated = CASE WHEN $4::boolean THEN $7 ELSE tasks.result_truncated END,
       result_artifact = coalesce($8::jsonb, tasks.result_artifact),
       progress = CASE WHEN $9::boolean THEN $10::jsonb ELSE tasks.progress END,
       input_required = NULL, error_code = $11, error_message = $12,
       poll_count = tasks.poll_count + 1, completed_at = now(), claim_count = u.claim_count
  FROM u WHERE tasks.id = u.id RETURNING tasks.id`;

/** The poll write as one row-by-row statement (fenced-write.sql.ts before #37). */
const ROW_BY_ROW_POLL_SQL = `WITH u AS (UPDATE task_leases
   SET lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, answers_waiting = false,
       next_attempt_at = CASE WHEN task_leases.answers_waiting THEN now()
                              ELSE now() + make_interval(secs => $7::float8 / 1000) END
 WHERE task_leases.task_id = $1 AND task_leases.lease_token = $2
   AND task_leases.lease_expires_at > now() AND NOT task_leases.cancel_requested
 RETURNING task_leases.task_id AS id)
UPDATE tasks SET status = $3,
   progress = CASE WHEN $4::boolean THEN $5::jsonb ELSE tasks.progress END,
   input_required = $6::jsonb, consecutive_errors = 0, last_error = NULL,
   last_success_at = now(), poll_count = tasks.poll_count + 1
  FROM u WHERE tasks.id = u.id RETURNING tasks.id`;

type Kind = 'finishRow' | 'finishBatch' | 'pollRow' | 'pollBatch';
const KINDS: Kind[] = ['finishRow', 'finishBatch', 'pollRow', 'pollBatch'];

interface Run {
  /** Per kind: mean wall µs per write, and the backend's CPU µs per write. */
  wallUs: Record<Kind, number>;
  backendUs: Record<Kind, number>;
  writes: number;
}

export const batchOfOneBench: Benchmark = {
  name: 'batch-of-one',
  title: 'A fenced write alone: batch of one vs the row-by-row statement',
  async run(ctx) {
    const rows = ctx.quick ? 2_000 : 8_000;
    const bench = await createBenchDatabase(ctx.adminUrl, 'batchofone', 1);
    const runs: Run[] = [];
    try {
      for (let round = 0; round < ctx.runs; round++) {
        await bench.db.query('TRUNCATE tasks CASCADE');
        await loadTasks(bench.db, { count: rows, status: 'working', dueFromMs: -60_000 });
        await bench.db.query('VACUUM ANALYZE tasks, task_leases');
        await bench.db.query('CHECKPOINT');
        const run = await writeAlone(bench.db);
        runs.push(run);
        ctx.log(
          `run ${round + 1}/${ctx.runs}: ` +
            KINDS.map(
              (k) => `${k} ${run.wallUs[k].toFixed(0)} µs (backend ${run.backendUs[k].toFixed(0)})`,
            ).join(', '),
        );
      }
    } finally {
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        rows,
        connections: 1,
        batcher: 'windowMs 0: each write sent alone, as the batch statement with one row',
        order: 'the four kinds interleaved row by row, each write awaited before the next',
      },
      rows: summarize(runs),
      runs,
    };
  },
};

/** Claims every row, then writes them one at a time, the four kinds in turn. */
async function writeAlone(db: Database): Promise<Run> {
  const [{ pid }] = await db.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`);
  // Batching on, and every write sent as soon as it is queued: a batch of one.
  const leases = new TaskLeaseRepository(db, { windowMs: 1, maxItems: 1 });
  const claimed: TaskLease[] = [];
  for (;;) {
    const batch = await leases.claim({
      workerId: 'bench-one',
      limit: 500,
      phases: [Phase.Poll],
      leaseMs: 600_000,
      deadWorkerAfterMs: 30_000,
    });
    if (batch.length === 0) break;
    claimed.push(...batch.map((task) => task.lease));
  }
  const wall: Record<Kind, number> = { finishRow: 0, finishBatch: 0, pollRow: 0, pollBatch: 0 };
  const cpu: Record<Kind, number> = { finishRow: 0, finishBatch: 0, pollRow: 0, pollBatch: 0 };
  const count: Record<Kind, number> = { finishRow: 0, finishBatch: 0, pollRow: 0, pollBatch: 0 };
  const write: Record<Kind, (lease: TaskLease) => Promise<boolean>> = {
    finishRow: async (lease) =>
      (
        await db.query(ROW_BY_ROW_FINISH_SQL, [
          lease.taskId,
          lease.token,
          DONE.status,
          false,
          null,
          null,
          false,
          null,
          false,
          null,
          null,
          null,
        ])
      ).length === 1,
    finishBatch: async (lease) => (await leases.finish(lease, DONE)) === 'applied',
    pollRow: async (lease) =>
      (
        await db.query(ROW_BY_ROW_POLL_SQL, [
          lease.taskId,
          lease.token,
          WORKING.status,
          false,
          null,
          null,
          POLL_DELAY_MS,
        ])
      ).length === 1,
    pollBatch: async (lease) =>
      (await leases.applyPoll(lease, WORKING, POLL_DELAY_MS)) === 'applied',
  };
  for (const [i, lease] of claimed.entries()) {
    const kind = KINDS[i % KINDS.length];
    const cpuBefore = cpuSeconds(pid);
    const started = performance.now();
    if (!(await write[kind](lease))) throw new Error(`${kind}: lease lost for ${lease.taskId}`);
    wall[kind] += performance.now() - started;
    cpu[kind] += cpuSeconds(pid) - cpuBefore;
    count[kind]++;
  }
  const per = (totals: Record<Kind, number>, scale: number): Record<Kind, number> =>
    Object.fromEntries(KINDS.map((k) => [k, (totals[k] * scale) / count[k]])) as Record<
      Kind,
      number
    >;
  return { wallUs: per(wall, 1e3), backendUs: per(cpu, 1e6), writes: claimed.length };
}

function summarize(runs: Run[]): ResultRow[] {
  const med = (f: (run: Run) => number): number => round(median(runs.map(f)));
  const rows: ResultRow[] = [];
  for (const [what, row, batch] of [
    ['terminal write', 'finishRow', 'finishBatch'],
    ['poll write', 'pollRow', 'pollBatch'],
  ] as const) {
    rows.push(
      {
        metric: `${what}, row-by-row statement: wall per write`,
        value: med((r) => r.wallUs[row]),
        unit: 'µs',
      },
      {
        metric: `${what}, batch of one: wall per write`,
        value: med((r) => r.wallUs[batch]),
        unit: 'µs',
      },
      {
        metric: `${what}: batch of one / row-by-row, wall (same run)`,
        value: med((r) => r.wallUs[batch] / r.wallUs[row]),
        unit: '×',
      },
      {
        metric: `${what}: batch of one / row-by-row, backend CPU (same run)`,
        value: med((r) => r.backendUs[batch] / r.backendUs[row]),
        unit: '×',
      },
    );
  }
  return rows;
}
