/**
 * Upstreams that push (docs/connections.md, "Push"): N native tasks (MCP 2026-07-28, the demo
 * server's `demo_task`, a day long) tracked by 2 pollers, once with push (the pollers subscribe
 * with `subscriptions/listen`) and once with the same tasks and UPSTREAM_PUSH=false. Measured:
 * upstream polls/s over a quiet window (only the safety poll with push), and the time from an
 * upstream change to the task's change in the gateway: the benchmark cancels tasks on the demo
 * server itself (`tasks/cancel`, the upstream's own change) and reads when the gateway stored
 * the task `cancelled` (`completed_at`, the database clock of the same host).
 */
import { parseSettings } from '@app/config';
import { request2026 } from '../test/helpers/mcp-2026';
import { writeServersFile } from '../test/helpers/processes';
import { BenchDatabase, createBenchDatabase } from './lib/bench-db';
import { pollerMissing } from './lib/poller-gate';
import { RunningDemo, RunningPoller, startDemoServer, startPoller } from './lib/poller-harness';
import { quantile, round, sleep } from './lib/stats';
import { Benchmark, ResultRow } from './lib/types';

/** The shipped default of PUSH_SAFETY_POLL_FACTOR: the settings of an empty environment. */
const SAFETY_POLL_FACTOR = parseSettings({ DATABASE_URL: 'postgres://unused' }).scheduling
  .pushSafetyPollFactor;

interface Mode {
  push: boolean;
  /** Upstream polls over the quiet window, and the window's length. */
  polls: number;
  windowSeconds: number;
  pollsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  changed: number;
}

export const upstreamPushBench: Benchmark = {
  name: 'upstream-push',
  title: 'Upstreams that push: change-to-gateway latency and polls/s, with and without push',
  async run(ctx) {
    const missing = pollerMissing();
    const settings = {
      tasks: 2_000,
      pollers: 2,
      pollIntervalMs: 5_000,
      safetyPollFactor: SAFETY_POLL_FACTOR,
      // One safety period (quick) or two: the tasks were all put under the subscription at
      // about the same time, so their safety polls come together; a shorter window can hold
      // none of them and show push polling nothing.
      windowMs: 5_000 * SAFETY_POLL_FACTOR * (ctx.quick ? 1 : 2),
      changes: ctx.quick ? 300 : 1_000,
      changeEveryMs: 10,
      slots: 256,
      leaseMs: 60_000,
      latency:
        'from just before the benchmark sends tasks/cancel to the demo server, to completed_at ' +
        'of the gateway row (both on this host clock): an upper bound',
    };
    if (missing) return { status: 'skipped', reason: missing, settings, rows: [], runs: [] };
    const modes: Mode[] = [];
    for (const push of [true, false]) {
      modes.push(await measureMode(push, settings, ctx.adminUrl, ctx.log));
      ctx.log(`${push ? 'push' : 'no push'}: ${JSON.stringify(modes[modes.length - 1])}`);
    }
    return { status: 'ok', settings, rows: summarize(modes), runs: modes };
  },
};

async function measureMode(
  push: boolean,
  settings: {
    tasks: number;
    pollers: number;
    pollIntervalMs: number;
    safetyPollFactor: number;
    windowMs: number;
    changes: number;
    changeEveryMs: number;
    slots: number;
    leaseMs: number;
  },
  adminUrl: string,
  log: (message: string) => void,
): Promise<Mode> {
  const bench = await createBenchDatabase(adminUrl, push ? 'push_on' : 'push_off', 2);
  let demo: RunningDemo | undefined;
  const pollers: RunningPoller[] = [];
  try {
    demo = await startDemoServer();
    const file = writeServersFile({
      demo: {
        url: demo.url,
        // A burst of 2,000 submits: a few at a time per poller, with room for a loaded machine.
        connectTimeoutMs: 5_000,
        callTimeoutMs: 10_000,
        maxConcurrentCalls: 32,
        taskToolsets: [{ name: 'push-task', contract: 'mcp-tasks', tool: 'demo_task' }],
      },
    });
    for (let i = 0; i < settings.pollers; i++) {
      pollers.push(
        await startPoller({
          databaseUrl: bench.url,
          demoUrl: demo.url,
          toolsetFile: file,
          leaseMs: settings.leaseMs,
          pollIntervalMs: settings.pollIntervalMs,
          minPollIntervalMs: settings.pollIntervalMs,
          slots: settings.slots,
          env: {
            UPSTREAM_PUSH: String(push),
            PUSH_SAFETY_POLL_FACTOR: String(settings.safetyPollFactor),
          },
        }),
      );
    }
    await insertTasks(bench, settings.tasks);
    // Steady state: every task submitted, and 95% of the working ones polled since (with push:
    // under a live subscription, so their next poll is the safety poll). Not all: on a loaded
    // machine a re-ask that times out drops the subscription and brings its tasks back to the
    // normal interval (docs/connections.md, "A lost subscription").
    await until(
      async () => {
        const { queued, working, settled } = await progress(bench, settings.pollIntervalMs, push);
        log(`${push ? 'push' : 'no push'}: ${queued} queued, ${settled}/${working} settled`);
        return queued === 0 && settled >= 0.95 * working;
      },
      `${settings.tasks} tasks in their steady state`,
      600_000,
      5_000,
    );
    const before = await polls(bench);
    const started = Date.now();
    await sleep(settings.windowMs);
    const polled = (await polls(bench)) - before;
    const windowSeconds = (Date.now() - started) / 1000;

    const targets = await bench.db.query<{ id: string; remote_task_id: string }>(
      `SELECT id, remote_task_id FROM tasks WHERE status = 'working' ORDER BY random() LIMIT $1`,
      [settings.changes],
    );
    const sentAt = new Map<string, number>();
    for (const target of targets) {
      sentAt.set(target.id, Date.now());
      await cancelUpstream(demo.url, target.remote_task_id);
      await sleep(settings.changeEveryMs);
    }
    const ids = [...sentAt.keys()];
    await until(
      async () => {
        const rows = await bench.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM tasks WHERE id = ANY($1::text[]) AND completed_at IS NOT NULL`,
          [ids],
        );
        return Number(rows[0].n) === ids.length;
      },
      'every changed task seen by the gateway',
      settings.pollIntervalMs * settings.safetyPollFactor * 2 + 60_000,
    );
    const ended = await bench.db.query<{ id: string; at: string }>(
      `SELECT id, (extract(epoch FROM completed_at) * 1000)::float8 AS at
         FROM tasks WHERE id = ANY($1::text[])`,
      [ids],
    );
    const latencies = ended.map((row) => Number(row.at) - sentAt.get(row.id)!);
    log(`${push ? 'push' : 'no push'}: ${latencies.length} changes measured`);
    return {
      push,
      polls: polled,
      windowSeconds: round(windowSeconds),
      pollsPerSecond: round(polled / windowSeconds),
      latencyP50Ms: round(quantile(latencies, 0.5)),
      latencyP99Ms: round(quantile(latencies, 0.99)),
      changed: latencies.length,
    };
  } finally {
    await Promise.all(pollers.map((poller) => poller.stop()));
    await demo?.stop();
    await bench.drop();
  }
}

/** Queued native tasks of a day each: they change only when the benchmark changes them. */
async function insertTasks(bench: BenchDatabase, count: number): Promise<void> {
  await bench.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     SELECT 'task_' || substr(md5(random()::text || g::text), 1, 26), 'user-' || (g % 100),
            'thread-1', 'push-task', 'mcp-tasks', 'demo', 'queued',
            '{"duration_ms": 86400000}'::jsonb
       FROM generate_series(1, $1::int) AS g`,
    [count],
  );
}

/**
 * Queued and working tasks, and the working ones polled at least once after their submit (with
 * push: also due no sooner than twice the normal interval, the safety poll).
 */
async function progress(bench: BenchDatabase, intervalMs: number, push: boolean) {
  const rows = await bench.db.query<{ queued: string; working: string; settled: string }>(
    `SELECT count(*) FILTER (WHERE status = 'queued') AS queued,
            count(*) FILTER (WHERE status = 'working') AS working,
            count(*) FILTER (WHERE status = 'working' AND poll_count >= 1
              AND ($2 = false OR next_attempt_at > now() + make_interval(secs => $1::float8 * 2 / 1000)))
              AS settled
       FROM task_rows`,
    [intervalMs, push],
  );
  return {
    queued: Number(rows[0].queued),
    working: Number(rows[0].working),
    settled: Number(rows[0].settled),
  };
}

async function polls(bench: BenchDatabase): Promise<number> {
  const rows = await bench.db.query<{ n: string }>(`SELECT sum(poll_count) AS n FROM tasks`);
  return Number(rows[0].n);
}

/** The upstream's own change: `tasks/cancel` straight to the demo server. */
async function cancelUpstream(url: string, taskId: string): Promise<void> {
  const { body, headers } = request2026('tasks/cancel', { taskId });
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`tasks/cancel answered HTTP ${response.status}`);
  await response.text();
}

async function until(
  probe: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  everyMs = 250,
) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

function summarize(modes: Mode[]): ResultRow[] {
  const on = modes.find((m) => m.push)!;
  const off = modes.find((m) => !m.push)!;
  // No poll with push in the window bounds the ratio from below only: fewer than one poll.
  const ratio = (off.pollsPerSecond / Math.max(on.polls, 1)) * on.windowSeconds;
  return [
    {
      metric: 'change → gateway p50, push',
      value: on.latencyP50Ms,
      unit: 'ms',
    },
    {
      metric: 'change → gateway p99, push',
      value: on.latencyP99Ms,
      unit: 'ms',
      target: '< 250 ms',
      met: on.latencyP99Ms < 250,
    },
    { metric: 'change → gateway p50, no push', value: off.latencyP50Ms, unit: 'ms' },
    { metric: 'change → gateway p99, no push', value: off.latencyP99Ms, unit: 'ms' },
    { metric: 'upstream polls/s, push (2,000 tasks)', value: on.pollsPerSecond, unit: 'polls/s' },
    {
      metric: 'upstream polls/s, no push (2,000 tasks)',
      value: off.pollsPerSecond,
      unit: 'polls/s',
    },
    {
      metric:
        on.polls > 0
          ? 'polls/s without push / with push'
          : 'polls/s without push / with push (at least: no poll with push in the window)',
      value: round(ratio),
      unit: '×',
      target: '≥ 10×',
      met: ratio >= 10,
    },
  ];
}
