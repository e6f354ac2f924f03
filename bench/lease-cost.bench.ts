/**
 * Where a burned-down row's CPU goes: one connection claims 500 due rows with the shipped claim
 * (TaskLeaseRepository.claim: the claim statement, then the read of the claimed tasks) and ends
 * each with `finish`, group-committed as the poller ships it (one batch statement for the
 * claim's 500 terminal writes), until nothing is due. The backend's CPU is read from /proc around each
 * statement and booked to the claim, the read or the finish; the worker's own CPU and the share
 * of HOT updates of `tasks` are reported beside it. The same burn-down runs again, interleaved,
 * with the `tasks_after_update` trigger disabled, so the difference is what the event outbox
 * (and the lease-row safety net beside it) costs a finish. The machine's Postgres must be local.
 */
import { TaskSnapshot, TaskStatus, Phase } from '@app/common';
import { QueryResultRow } from 'pg';
import { Database, Queryable, TaskLeaseRepository } from '@app/persistence';
import { createBenchDatabase } from './lib/bench-db';
import { loadTasks } from './lib/load-tasks';
import { cpuSeconds } from './lib/poller-harness';
import { median, round } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const BATCH = 500;
const DONE: TaskSnapshot = { status: TaskStatus.Completed };
type Kind = 'claim' | 'read' | 'finish';

interface Run {
  outbox: boolean;
  rows: number;
  seconds: number;
  /** Backend CPU µs per row, by statement kind. */
  backendUs: Record<Kind, number>;
  workerUs: number;
  hotShare: number;
}

export const leaseCostBench: Benchmark = {
  name: 'lease-cost',
  title: "Lease engine: a burned-down row's CPU, statement by statement",
  async run(ctx) {
    const rows = ctx.quick ? 10_000 : 20_000;
    const bench = await createBenchDatabase(ctx.adminUrl, 'leasecost', 1);
    const runs: Run[] = [];
    try {
      for (let round = 0; round < ctx.runs; round++) {
        for (const outbox of [true, false]) {
          await bench.db.query(
            `ALTER TABLE tasks ${outbox ? 'ENABLE' : 'DISABLE'} TRIGGER tasks_after_update`,
          );
          await bench.db.query('TRUNCATE tasks CASCADE');
          await loadTasks(bench.db, {
            count: rows,
            status: 'working',
            dueFromMs: -60_000,
            dueToMs: 0,
          });
          await bench.db.query('VACUUM ANALYZE tasks, task_leases');
          await bench.db.query('CHECKPOINT');
          const run = await burnDown(bench.db, outbox);
          runs.push(run);
          ctx.log(
            `run ${round + 1}/${ctx.runs}, outbox ${outbox ? 'on' : 'off'}: ${Math.round(run.rows / run.seconds)} rows/s, ` +
              `backend µs/row claim ${run.backendUs.claim.toFixed(1)} read ${run.backendUs.read.toFixed(1)} ` +
              `finish ${run.backendUs.finish.toFixed(1)}, worker ${run.workerUs.toFixed(1)}`,
          );
        }
      }
      await bench.db.query(`ALTER TABLE tasks ENABLE TRIGGER tasks_after_update`);
    } finally {
      await bench.drop();
    }
    return {
      status: 'ok',
      settings: {
        rows,
        claimBatch: BATCH,
        connections: 1,
        cpu: 'the backend of the one connection from /proc around each statement; the worker from process.cpuUsage',
      },
      rows: summarize(runs),
      runs,
    };
  },
};

/** Claims and ends every due row on one connection, booking the backend's CPU per statement. */
async function burnDown(db: Database, outbox: boolean): Promise<Run> {
  // The pool has one connection, so every statement below runs on this backend.
  const [{ pid }] = await db.query<{ pid: number }>(`SELECT pg_backend_pid() AS pid`);
  const booked: Record<Kind, number> = { claim: 0, read: 0, finish: 0 };
  const metered: Queryable & Pick<Database, 'transaction'> = {
    async query<R extends QueryResultRow>(sql: string, params?: unknown[], name?: string) {
      const kind: Kind = /DELETE FROM task_leases/.test(sql)
        ? 'finish'
        : /FROM task_rows WHERE id = ANY/.test(sql)
          ? 'read'
          : 'claim';
      const before = cpuSeconds(pid);
      const rows = await db.query<R>(sql, params, name);
      booked[kind] += cpuSeconds(pid) - before;
      return rows;
    },
    transaction: (fn) => db.transaction(fn),
  };
  // Group commit as the poller ships it; a full batch goes at once.
  const leases = new TaskLeaseRepository(metered, { windowMs: 3, maxItems: BATCH });
  const stats = () =>
    db.query<{ upd: string; hot: string }>(
      `SELECT n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'tasks'`,
    );
  // Statistics reach pg_stat_user_tables when a backend flushes them; this one flushes at once.
  await db.query('SELECT pg_stat_force_next_flush()');
  const [start] = await stats();
  const worker = process.cpuUsage();
  const startedAt = performance.now();
  let done = 0;
  for (;;) {
    const claimed = await leases.claim({
      workerId: 'bench-cost',
      limit: BATCH,
      phases: [Phase.Poll],
      leaseMs: 120_000,
      deadWorkerAfterMs: 30_000,
    });
    if (claimed.length === 0) break;
    const ended = await Promise.all(claimed.map((c) => leases.finish(c.lease, DONE)));
    const lost = ended.filter((outcome) => outcome !== 'applied').length;
    if (lost > 0) throw new Error(`${lost} leases lost`);
    done += claimed.length;
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const used = process.cpuUsage(worker);
  await db.query('SELECT pg_stat_force_next_flush()');
  await db.query('SELECT 1');
  const [end] = await stats();
  const perRow = (s: number): number => (s * 1e6) / done;
  return {
    outbox,
    rows: done,
    seconds,
    backendUs: {
      claim: perRow(booked.claim),
      read: perRow(booked.read),
      finish: perRow(booked.finish),
    },
    workerUs: (used.user + used.system) / done,
    hotShare:
      (Number(end.hot) - Number(start.hot)) / Math.max(1, Number(end.upd) - Number(start.upd)),
  };
}

/** Each row: its metric, the runs it is the median of (outbox on or off), the figure, the unit. */
const ROWS: [string, boolean, (r: Run) => number, string][] = [
  ['rows/s on one connection', true, (r) => r.rows / r.seconds, 'rows/s'],
  ['backend CPU per row: the claim statement', true, (r) => r.backendUs.claim, 'µs'],
  ['backend CPU per row: the read of the claimed tasks', true, (r) => r.backendUs.read, 'µs'],
  ['backend CPU per row: the batched terminal write', true, (r) => r.backendUs.finish, 'µs'],
  [
    'backend CPU per row: the batched terminal write without the outbox trigger',
    false,
    (r) => r.backendUs.finish,
    'µs',
  ],
  ['worker CPU per row (claim, read, finish, in Node)', true, (r) => r.workerUs, 'µs'],
  ['HOT share of the updates of tasks', true, (r) => r.hotShare, '×'],
];

function summarize(runs: Run[]): ResultRow[] {
  return ROWS.map(([metric, outbox, figure, unit]) => ({
    metric,
    value: round(median(runs.filter((r) => r.outbox === outbox).map(figure))),
    unit,
  }));
}
