// Guards against polling on a timer an upstream that pushes (docs/connections.md, "Push"): a task
// change the upstream announces must reach the gateway at once (the poll interval here is ten
// minutes, so only the push can explain a change within seconds), the next poll of a task the
// subscription covers must be the slow safety poll, a lost subscription must bring its tasks
// back to the normal interval at once, and a server that does not push must be polled as
// before. On a server speaking both eras, on a strict 2026-07-28 one over HTTP and over stdio
// (the poller's own child), and on a 2025-11-25 one (notifications/tasks/status on the task
// session).
import { readFileSync } from 'node:fs';
import { useFleet } from '../helpers/fleet';
import {
  dueInSeconds,
  insertFleetTasks,
  taskStates,
  waitToolsetsAvailable,
} from '../helpers/fleet-tasks';
import {
  DemoServerProcess,
  PollerProcess,
  ServerEntry,
  demoStdioCommand,
  demoStdioEntry,
  metricValue,
  stdioChildrenOf,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// Ten minutes: a change seen within seconds was pushed, not polled.
const INTERVAL_MS = 600_000;
const FACTOR = 10;

const fleet = useFleet();
let both: DemoServerProcess;
let strict: DemoServerProcess;
let silent: DemoServerProcess;
let only2025: DemoServerProcess;
let poller: PollerProcess;

/** A server with one `mcp-tasks` toolset, `<name>-task`, on the demo's tool `tool`. */
function server(name: string, demo: DemoServerProcess, tool = 'demo_task'): ServerEntry {
  return {
    url: `${demo.url}/mcp`,
    connectTimeoutMs: 2000,
    callTimeoutMs: 3000,
    taskToolsets: [{ name: `${name}-task`, contract: 'mcp-tasks', tool }],
  };
}

beforeAll(async () => {
  [both, strict, silent, only2025] = await Promise.all([
    fleet.demo(),
    fleet.demo(['--strict-2026']),
    fleet.demo(['--no-push']),
    fleet.demo(['--only-2025']),
  ]);
  const servers = {
    both: {
      ...server('both', both),
      taskToolsets: [
        { name: 'both-task', contract: 'mcp-tasks', tool: 'demo_task' },
        // A 2026-07-28 task that mirrors a 2025-side job (its own timeline, not the task's).
        { name: 'mirror-task', contract: 'mcp-tasks', tool: 'demo_task_optional' },
      ],
    },
    strict: server('strict', strict),
    silent: server('silent', silent),
    old: server('old', only2025, 'demo_task_required'),
    // The poller's own child on its 2025-11-25 session, which has no session ID.
    stdio2025: {
      ...demoStdioEntry([
        { name: 'stdio2025-task', contract: 'mcp-tasks', tool: 'demo_task_required' },
      ]),
      callTimeoutMs: 3000,
    },
    // Unpinned: found to speak 2026-07-28 by its refused session.
    stdio: {
      ...demoStdioEntry([{ name: 'stdio-task', contract: 'mcp-tasks', tool: 'demo_task' }]),
      ...demoStdioCommand(['--strict-2026']),
      callTimeoutMs: 3000,
    },
  };
  poller = await fleet.poller(servers, {
    env: {
      POLL_INTERVAL_MS: String(INTERVAL_MS),
      MIN_POLL_INTERVAL_MS: String(INTERVAL_MS),
      INPUT_REQUIRED_POLL_INTERVAL_MS: String(INTERVAL_MS),
      PUSH_SAFETY_POLL_FACTOR: String(FACTOR),
      LEASE_MS: '20000',
    },
  });
  await waitToolsetsAvailable(fleet.db, 7);
}, 120_000);

async function submit(toolset: string, server: string, input: Record<string, unknown>) {
  const [id] = await insertFleetTasks(fleet.db, [
    { toolset, server, contract: 'mcp-tasks', input },
  ]);
  return id;
}

async function pollCount(id: string): Promise<number> {
  const rows = await fleet.db.query<{ n: number }>(
    `SELECT poll_count AS n FROM tasks WHERE id = $1`,
    [id],
  );
  return rows[0].n;
}

const stretched = (s: number | null): boolean =>
  s !== null && s > (INTERVAL_MS / 1000) * 1.5 && s <= (INTERVAL_MS / 1000) * FACTOR * 1.1;
const normal = (s: number | null): boolean => s !== null && s <= (INTERVAL_MS / 1000) * 1.1;

/** The poller's count of pushed wakes or lost subscriptions for `server`. */
async function pushMetric(kind: 'wakes' | 'lost', server: string): Promise<number> {
  return metricValue(await poller.metrics(), `mcp_tasks_push_${kind}_total`, { server });
}

/** The arguments of a task that works 1.5 s, then waits for an answer a minute, per era. */
function waitingTask(name: string): Record<string, unknown> {
  const tag = `push-${name}-${Date.now()}`;
  return name === 'old' || name === 'stdio2025'
    ? { duration_ms: 120_000, input_required_after_ms: 1500, input_required_for_ms: 60_000, tag }
    : { duration_ms: 1500, questions: 1, ask_after_ms: 1500, tag };
}

it.each([
  ['both', 'a server speaking both eras'],
  ['strict', 'a strict 2026-07-28 server'],
  ['stdio', 'a strict 2026-07-28 server over stdio'],
  ['old', 'a 2025-11-25 server'],
  ['stdio2025', 'a 2025-11-25 server over stdio'],
])(
  '%s (%s): a pushed change reaches the gateway at once; the next poll is the safety poll',
  async (name) => {
    const id = await submit(`${name}-task`, name, waitingTask(name));
    // working → input_required at 1.5 s, seen within seconds: the ten-minute poll interval
    // cannot explain it, the push can.
    await waitUntil(
      async () =>
        (await taskStates(fleet.db, [id])).get(id)!.status === 'input_required' ? true : undefined,
      `${name}: input_required pushed`,
      20_000,
    );
    // That poll ran under a live subscription: the next one is the slow safety poll.
    await waitUntil(
      async () => (stretched(await dueInSeconds(fleet.db, id)) ? true : undefined),
      'safety poll',
    );
    // The submit, and the poll the push asked for.
    expect(await pollCount(id)).toBeLessThanOrEqual(2);
    // Operators see the server push (docs/connections.md, "What operators see").
    expect(await pushMetric('wakes', name)).toBeGreaterThanOrEqual(1);
  },
  60_000,
);

it('a listen pushes the end of a 2026-07-28 task that mirrors a 2025-side job', async () => {
  // The job ends after 1.5 s; the ten-minute interval cannot explain an end seen within
  // seconds. The demo server once acknowledged such tasks without reporting them, so the
  // gateway waited for its safety poll.
  const id = await submit('mirror-task', 'both', {
    duration_ms: 1500,
    tag: `push-mirror-${Date.now()}`,
  });
  await waitUntil(
    async () =>
      (await taskStates(fleet.db, [id])).get(id)!.status === 'completed' ? true : undefined,
    'the mirrored task to end, pushed',
    20_000,
  );
  expect(await pollCount(id)).toBeLessThanOrEqual(2);
});

it('a server that does not push is polled as before', async () => {
  const id = await submit('silent-task', 'silent', { duration_ms: 600_000, tag: 'push-silent' });
  await waitUntil(async () => {
    const state = (await taskStates(fleet.db, [id])).get(id)!;
    return state.status === 'working' && state.remote_task_id ? true : undefined;
  }, 'the silent task submitted');
  // The poller asked it to push and was refused; the task keeps the normal interval.
  await waitUntil(
    () => poller.logs.find((l) => l.msg === 'push subscription refused' && l.server === 'silent'),
    'the refused subscription logged',
  );
  expect(normal(await dueInSeconds(fleet.db, id))).toBe(true);
  expect(await pushMetric('wakes', 'silent')).toBe(0);
});

/** Submits a waiting task to server `name` and waits until its next poll is the safety poll. */
async function submitCovered(name: string): Promise<string> {
  const id = await submit(`${name}-task`, name, waitingTask(name));
  await waitUntil(
    async () => (stretched(await dueInSeconds(fleet.db, id)) ? true : undefined),
    `${name}: covered by its subscription`,
  );
  return id;
}

it.each([
  ['both', 'subscriptions/listen'],
  ['old', 'the 2025-11-25 session stream'],
])(
  '%s: a lost subscription (%s) brings its tasks back to the normal interval at once',
  async (name) => {
    const id = await submitCovered(name);
    // The server restarts on its port: the stream ends, and the task is due within the normal
    // interval again (the restarted server no longer knows it: that poll ends it as lost).
    const old = name === 'old';
    const demo = old ? only2025 : both;
    await demo.kill();
    const again = await fleet.demo(old ? ['--only-2025'] : [], {
      port: Number(new URL(demo.url).port),
    });
    if (old) only2025 = again;
    else both = again;
    await waitUntil(
      async () => (normal(await dueInSeconds(fleet.db, id)) ? true : undefined),
      'pulled in',
    );
    expect(poller.logs.some((l) => l.msg === 'push subscription lost' && l.server === name)).toBe(
      true,
    );
    expect(await pushMetric('lost', name)).toBeGreaterThanOrEqual(1);
  },
  60_000,
);

it.each([
  ['stdio', 'subscriptions/listen'],
  ['stdio2025', 'the 2025-11-25 session'],
])(
  '%s: the exit of the child that pushes (%s) brings its tasks back at once',
  async (name) => {
    const id = await submitCovered(name);
    // The subscription lived in the child, as the task did: both are gone with it. Only this
    // server's child: the other stdio server's tasks must keep their push.
    const command = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    for (const pid of stdioChildrenOf(poller.child.pid!)) {
      if (command(pid).includes('--strict-2026') === (name === 'stdio'))
        process.kill(pid, 'SIGKILL');
    }
    await waitUntil(
      () => poller.logs.find((l) => l.msg === 'push subscription lost' && l.server === name),
      'the lost subscription logged',
    );
    // Due within the normal interval again (that poll finds the task gone with its child).
    await waitUntil(
      async () => (normal(await dueInSeconds(fleet.db, id)) ? true : undefined),
      'pulled in',
    );
    expect(await pushMetric('lost', name)).toBeGreaterThanOrEqual(1);
  },
  60_000,
);
