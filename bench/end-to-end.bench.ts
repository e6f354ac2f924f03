/**
 * End-to-end throughput: ordinary tasks submitted through the API (open loop, from a load
 * generator in its own process), claimed by 2 real pollers, submitted to and polled once on the
 * demo server over Streamable HTTP (each completes on its first poll). Tasks/s is the number of
 * tasks over the database's span from the first `created_at` to the last `completed_at`; the CPU
 * of every process (API, pollers, demo server, the Postgres backends of the benchmark's
 * database) is read from /proc over the same span and given per task and as a share of the
 * machine's cores.
 */
import { cpus } from 'node:os';
import { submitRequest, waitForToolset } from './api-submit.bench';
import { startApi, RunningApi } from './lib/api-process';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { OpenLoopGenerator } from './lib/open-loop';
import { demoAnswers, demoAnswersJson, Fleet, startFleet } from './lib/poller-fleet';
import { pollerMissing } from './lib/poller-gate';
import { backendCpuDelta, cpuOf, postgresBackendCpu } from './lib/process-cpu';
import { median, round, sleep } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

const PARTS = ['api', 'pollers', 'demo server', 'postgres backends'] as const;
type Part = (typeof PARTS)[number];

interface Run {
  tasks: number;
  seconds: number;
  tasksPerSecond: number;
  notCompleted: number;
  cpuMsPerTask: Record<Part, number>;
}

export const endToEndBench: Benchmark = {
  name: 'end-to-end',
  title: 'End to end: ordinary tasks through the API, 2 pollers and the demo server (HTTP)',
  async run(ctx) {
    const missing = pollerMissing();
    const settings = {
      offeredPerSecond: 400,
      seconds: ctx.quick ? 8 : 20,
      pollers: 2,
      slots: 128,
      maxConcurrentCalls: 64,
      pollIntervalMs: 1_000,
      demoAnswers: demoAnswers(),
      runs: ctx.quick ? 1 : ctx.runs,
      task: 'demo_submit {duration_ms: 0}: done when first polled (min poll interval 1 s)',
      postgresCpu: 'backends of the benchmark database only (pg_stat_activity pids)',
    };
    if (missing) return { status: 'skipped', reason: missing, settings, rows: [], runs: [] };
    const runs: Run[] = [];
    for (let r = 0; r < settings.runs; r++) {
      const run = await oneRun(ctx.adminUrl, settings);
      ctx.log(JSON.stringify(run));
      runs.push(run);
    }
    return { status: 'ok', settings, rows: summarize(runs), runs };
  },
};

async function oneRun(
  adminUrl: string,
  settings: {
    offeredPerSecond: number;
    seconds: number;
    pollers: number;
    slots: number;
    maxConcurrentCalls: number;
    pollIntervalMs: number;
  },
): Promise<Run> {
  const bench = await createBenchDatabase(adminUrl, 'e2e', 2);
  let fleet: Fleet | undefined;
  let api: RunningApi | undefined;
  let generator: OpenLoopGenerator | undefined;
  try {
    fleet = await startFleet(bench, settings.pollers, {
      leaseMs: 30_000,
      pollIntervalMs: settings.pollIntervalMs,
      minPollIntervalMs: settings.pollIntervalMs,
      slots: settings.slots,
      maxConcurrentCalls: settings.maxConcurrentCalls,
      demoJsonResponse: demoAnswersJson(),
    });
    await waitForToolset(bench, 'demo-ordinary');
    api = await startApi(bench.url);
    generator = await OpenLoopGenerator.start();
    const request = await submitRequest(bench, api.url, 'e2e');
    // Warm the API and the pollers, then start from an empty table.
    await generator.run({ request, ratePerSecond: 50, seconds: 2, firstIndex: 0 });
    await waitAllDone(bench, 60_000);
    await bench.db.query(`DELETE FROM tasks`);
    const pids = [api.pid, ...fleet.pollers.map((p) => p.pid), fleet.demo.pid];
    const cpuBefore = cpuOf(pids);
    const pgBefore = await postgresBackendCpu(bench.db);
    const report = await generator.run({
      request,
      ratePerSecond: settings.offeredPerSecond,
      seconds: settings.seconds,
      firstIndex: 1_000_000,
    });
    const notCompleted = await waitAllDone(bench, 300_000);
    const cpuAfter = cpuOf(pids);
    const pgAfter = await postgresBackendCpu(bench.db);
    const span = await bench.db.query<{ n: string; seconds: number }>(
      `SELECT count(*) AS n,
              extract(epoch FROM max(completed_at) - min(created_at))::float8 AS seconds
         FROM tasks`,
    );
    const tasks = Number(span[0].n);
    const cpu = cpuAfter.map((after, i) => after - cpuBefore[i]);
    const perTask = (seconds: number): number => (seconds * 1000) / tasks;
    const pollerCpu = cpu.slice(1, 1 + settings.pollers).reduce((a, b) => a + b, 0);
    if ((report.statuses['201'] ?? 0) !== tasks) {
      throw new Error(`${tasks} tasks stored but ${JSON.stringify(report.statuses)} answered`);
    }
    return {
      tasks,
      seconds: span[0].seconds,
      tasksPerSecond: tasks / span[0].seconds,
      notCompleted,
      cpuMsPerTask: {
        api: perTask(cpu[0]),
        pollers: perTask(pollerCpu),
        'demo server': perTask(cpu[cpu.length - 1]),
        'postgres backends': perTask(backendCpuDelta(pgBefore, pgAfter)),
      },
    };
  } finally {
    generator?.stop();
    await api?.stop();
    await fleet?.stop();
    await bench.drop();
  }
}

/** Waits until no task is active; returns how many ended other than `completed`. */
async function waitAllDone(bench: BenchDatabase, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await bench.db.query<{ active: string; other: string }>(
      `SELECT count(*) FILTER (WHERE completed_at IS NULL) AS active,
              count(*) FILTER (WHERE completed_at IS NOT NULL AND status <> 'completed') AS other
         FROM tasks`,
    );
    if (Number(rows[0].active) === 0) return Number(rows[0].other);
    if (Date.now() > deadline) throw new Error(`${rows[0].active} tasks still active`);
    await sleep(200);
  }
}

function summarize(runs: Run[]): ResultRow[] {
  const med = (pick: (run: Run) => number): number => median(runs.map(pick));
  const rate = med((run) => run.tasksPerSecond);
  const cores = cpus().length;
  const rows: ResultRow[] = [
    {
      metric: 'tasks/s, first submit to last completion (400/s offered)',
      value: round(rate),
      unit: 'tasks/s',
      target: '≥ 250 tasks/s',
      met: rate >= 250,
    },
    { metric: 'tasks not completed', value: med((run) => run.notCompleted), unit: 'tasks' },
  ];
  for (const part of PARTS) {
    const ms = med((run) => run.cpuMsPerTask[part]);
    rows.push({
      metric: `CPU per task: ${part} (share of ${cores} cores at the measured rate)`,
      value: round(ms),
      unit: `ms CPU/task (${round((ms * rate) / 10 / cores)}%)`,
    });
  }
  return rows;
}
