// Guards pinned stdio native tasks: only the worker owning the child polls them; once it dies they end upstream_task_lost;
// a database outage that leaves every heartbeat stale, or a silence just past the dead-after window, hands nothing over
// (docs/leases.md, "Workers").
import { readFileSync } from 'node:fs';
import { deadAfterMs } from '@app/config';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { attemptLines, awaitAttemptLines, awaitUpstreamReady } from '../helpers/poller-logs';
import {
  demoStdioCommand,
  demoStdioEntry,
  PollerProcess,
  type ServerEntry,
  stdioChildrenOf,
  useStdioChildren,
  writeServersFile,
} from '../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitUntil } from '../helpers/wait';

const HEARTBEAT_INTERVAL_MS = 300;
/** The beat of the outage and silence cases: a dead-after window of 3 s. */
const BEAT_MS = 1000;
const DEAD_AFTER_MS = deadAfterMs(HEARTBEAT_INTERVAL_MS);
// A window of silence, a window more after the other poller's suspicion, plus one claim
// wake-up (fallback 1 s), generous for a loaded box.
const TAKEOVER_DEADLINE_MS = 2 * DEAD_AFTER_MS + 10_000;

// Pollers stop after each test: a poller left from one test, outside the next one's outage,
// would rightly judge that test's owner dead.
const fleet = useFleet({ perTest: true });
/** Stdio demo children of the pollers, killed by PID after each test if still alive. */
const stdioChildren = useStdioChildren();

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

interface PinnedRow {
  status: string;
  error_code: string | null;
  error_message: string | null;
  pinned_worker_id: string | null;
  lease_owner: string | null;
  remote_task_id: string | null;
  poll_count: number;
  claim_count: number;
  completed_at: Date | null;
}

async function pinnedRow(id: string): Promise<PinnedRow> {
  const rows = await fleet.db.query<PinnedRow>(
    `SELECT status, error_code, error_message, pinned_worker_id, lease_owner, remote_task_id,
            poll_count, claim_count, completed_at
       FROM task_rows WHERE id = $1`,
    [id],
  );
  return rows[0];
}

// A 2025-11-25 native task on the child's session, and a task of the tasks extension on a child
// that speaks 2026-07-28 only (found by its refused session; docs/connections.md, "MCP 2026-07-28
// over stdio").
const NATIVE = {
  name: 'native',
  contract: 'mcp-tasks',
  tool: 'demo_task_required',
  ttlMs: 600_000,
};
const ERAS: Array<[string, ServerEntry]> = [
  ['a stdio native task', demoStdioEntry([NATIVE])],
  [
    'a 2026-07-28 task of a strict stdio server',
    {
      ...demoStdioEntry([{ name: 'native', contract: 'mcp-tasks', tool: 'demo_task' }]),
      ...demoStdioCommand(['--strict-2026']),
    },
  ],
];

it.each(ERAS)(
  '%s stays with its owner while it lives, then ends upstream_task_lost',
  async (_, entry) => {
    const serversFile = writeServersFile({ local: entry });
    // A native cancel chains a connect and three calls (2000 + 3 × 900 ms): the lease must hold it
    // (docs/leases.md, "Attempt deadlines").
    // Polled, not pushed, so the polls show who holds the row (push over stdio is
    // test/poller/upstream-push.test.ts).
    const env = {
      HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_INTERVAL_MS),
      LEASE_MS: '5000',
      UPSTREAM_PUSH: 'false',
    };
    const pollers = await Promise.all([
      fleet.poller(serversFile, { env }),
      fleet.poller(serversFile, { env }),
    ]);
    // Both sessions first: a submit claimed by a poller still connecting ends transient_error
    // there (the other poller then "touched" the row) and waits out the error backoff.
    await awaitUpstreamReady(pollers, 'local');
    const [id] = await insertFleetTasks(fleet.db, [
      {
        toolset: 'native',
        server: 'local',
        contract: 'mcp-tasks',
        input: { duration_ms: 120_000, poll_interval_ms: 100, tag: 'pinned' },
      },
    ]);
    let seen: PinnedRow | undefined;
    const submitted = await waitUntil(
      async () => {
        const row = (seen = await pinnedRow(id));
        // An ended task is returned too, so the assertions below name what happened to it.
        return row.remote_task_id !== null || row.completed_at !== null ? row : undefined;
      },
      () => `the native task to be created (the row: ${JSON.stringify(seen)})`,
      20_000,
    );
    const owner = pollers.find((p) => p.workerId === submitted.pinned_worker_id);
    expect(owner).toBeDefined();
    const other = pollers.find((p) => p !== owner) as PollerProcess;
    expect(submitted.status).toBe('working');
    // Many polls while both live: every claim is the owner's, the other never touches the row.
    const owners = new Set<string>();
    const polled = await waitUntil(
      async () => {
        const row = await pinnedRow(id);
        if (row.lease_owner) owners.add(row.lease_owner);
        return row.poll_count >= 10 ? row : undefined;
      },
      'ten polls by the owner',
      20_000,
      20,
    );
    expect(polled.status).toBe('working');
    expect([...owners].filter((w) => w !== owner!.workerId)).toEqual([]);
    expect(attemptLines([other]).filter((l) => l.taskId === id)).toEqual([]);
    await awaitAttemptLines([owner!], id, (lines) => lines.length >= 10);

    const children = stdioChildrenOf(owner!.child.pid!);
    expect(children.length).toBeGreaterThan(0);
    for (const pid of children) stdioChildren.add(pid);
    await owner!.kill();
    const ended = await waitUntil(
      async () => {
        const row = await pinnedRow(id);
        return row.completed_at !== null ? row : undefined;
      },
      'the other poller to end the task',
      TAKEOVER_DEADLINE_MS,
      50,
    );
    expect([ended.status, ended.error_code]).toEqual(['failed', 'upstream_task_lost']);
    expect(ended.error_message).toContain(owner!.workerId);
    // Taken over only once the owner was silent a window, and a window more after the other
    // poller suspected it (database clock).
    const [worker] = await fleet.db.query<{ stale_at: Date; confirmed_at: Date | null }>(
      `SELECT heartbeat_at + make_interval(secs => $2::float8 / 1000) AS stale_at,
            suspected_at + make_interval(secs => $2::float8 / 1000) AS confirmed_at
       FROM workers WHERE id = $1`,
      [owner!.workerId, DEAD_AFTER_MS],
    );
    expect(worker.confirmed_at).not.toBeNull();
    expect(worker.confirmed_at!.getTime()).toBeGreaterThan(worker.stale_at.getTime());
    expect(ended.completed_at!.getTime()).toBeGreaterThanOrEqual(worker.confirmed_at!.getTime());
    const takeover = await awaitAttemptLines([other], id);
    expect(takeover.map((l) => l.outcome)).toEqual(['ok']);
    // The owner's stdio child went with it (its stdin closed).
    await waitUntil(
      () => (children.every((pid) => !alive(pid)) ? true : undefined),
      "the owner's stdio child to exit",
    );
  },
);

/**
 * Two pollers of one stdio native toolset (one-second beat, a lease and connect timeout for a
 * loaded box), and a long native task created through them: its owner and the other poller.
 */
async function ownedTask(
  tag: string,
  env: Record<string, string> = {},
): Promise<{ id: string; pollers: PollerProcess[]; owner: PollerProcess; other: PollerProcess }> {
  const serversFile = writeServersFile({
    local: {
      ...demoStdioEntry([
        { name: 'native', contract: 'mcp-tasks', tool: 'demo_task_required', ttlMs: 600_000 },
      ]),
      connectTimeoutMs: 8000,
    },
  });
  const pollerEnv = { HEARTBEAT_INTERVAL_MS: String(BEAT_MS), LEASE_MS: '12000', ...env };
  const pollers = await Promise.all([
    fleet.poller(serversFile, { env: pollerEnv }),
    fleet.poller(serversFile, { env: pollerEnv }),
  ]);
  await awaitUpstreamReady(pollers, 'local');
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'native',
      server: 'local',
      contract: 'mcp-tasks',
      input: { duration_ms: 120_000, poll_interval_ms: 100, tag },
    },
  ]);
  const submitted = await waitUntil(
    async () => {
      const row = await pinnedRow(id);
      return row.remote_task_id !== null || row.completed_at !== null ? row : undefined;
    },
    'the native task to be created',
    20_000,
  );
  expect(submitted.status).toBe('working');
  const owner = pollers.find((p) => p.workerId === submitted.pinned_worker_id)!;
  const other = pollers.find((p) => p !== owner)!;
  for (const pid of stdioChildrenOf(owner.child.pid!)) stdioChildren.add(pid);
  return { id, pollers, owner, other };
}

/** Waits until `condition`, SQL over the `workers` row of `workerId` with `$2` as `ms`, holds. */
async function awaitWorker(workerId: string, condition: string, ms: number, what: string) {
  await waitUntil(
    async () => {
      const [row] = await fleet.db.query<{ holds: boolean }>(
        `SELECT (${condition}) AS holds FROM workers WHERE id = $1`,
        [workerId, ms],
      );
      return row.holds || undefined;
    },
    what,
    20_000,
    50,
  );
}

/** Ten more polls of `id` after `pollsBefore`: all the owner's, the task still working. */
async function expectOwnerKeeps(
  id: string,
  pollsBefore: number,
  owner: PollerProcess,
  other: PollerProcess,
): Promise<void> {
  const after = await waitUntil(
    async () => {
      const row = await pinnedRow(id);
      return row.poll_count >= pollsBefore + 10 || row.completed_at !== null ? row : undefined;
    },
    'ten more polls by the owner',
    30_000,
    50,
  );
  expect([after.status, after.error_code]).toEqual(['working', null]);
  expect(after.pinned_worker_id).toBe(owner.workerId);
  expect(attemptLines([other]).filter((l) => l.taskId === id)).toEqual([]);
}

let proxy: TcpProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

it('after a database outage that left every heartbeat stale, a live owner keeps its stdio task', async () => {
  // A one-second beat: the owner has a whole dead-after window (3 s) to beat again after the
  // outage before the other poller's own run of heartbeats lets it judge anyone dead.
  const deadAfter = deadAfterMs(BEAT_MS);
  const target = new URL(fleet.url);
  proxy = await startTcpProxy(Number(target.port || 5432));
  const viaProxy = new URL(fleet.url);
  viaProxy.port = String(proxy.port);
  const { id, pollers, owner, other } = await ownedTask('outage', {
    DATABASE_URL: viaProxy.toString(),
  });

  // The outage: no connection to the database for anyone until every heartbeat is older than
  // the dead-after window (read past the proxy, on the database clock). The owner is also held
  // still across it, so that after it the other poller is back first: the order a loaded
  // failover produces, and the one in which a judgement by stale heartbeats goes wrong.
  owner.pause();
  proxy.refuseNew(true);
  proxy.cutAll();
  await waitUntil(
    async () => {
      const [row] = await fleet.db.query<{ stale: boolean }>(
        `SELECT bool_and(heartbeat_at < now() - make_interval(secs => $2::float8 / 1000)) AS stale
           FROM workers WHERE id = ANY($1::text[])`,
        [pollers.map((p) => p.workerId), deadAfter],
      );
      return row.stale || undefined;
    },
    'every heartbeat to be older than the dead-after window',
    20_000,
  );
  const pollsBefore = (await pinnedRow(id)).poll_count;
  proxy.refuseNew(false);
  // The other poller beats again first; only then is the owner continued.
  await awaitWorker(
    other.workerId,
    'heartbeat_at > now() - make_interval(secs => $2::float8 / 1000)',
    deadAfter,
    'the other poller to beat again',
  );
  owner.resume();
  await expectOwnerKeeps(id, pollsBefore, owner, other);
}, 90_000);

it('a live owner silent just past the dead-after window, then back, keeps its stdio task', async () => {
  // What a database outage shorter than the streak's break does to an owner whose last beat
  // fell early in its interval (the failover chaos run, seed 3): its heartbeat is older than the
  // window while the other poller's run of heartbeats is unbroken. Here the owner alone is held
  // still, past the window by half of it, which the old rule (silent a window: dead) already
  // judged dead; the other poller only suspects it, and a window must pass after that.
  const deadAfter = deadAfterMs(BEAT_MS);
  const { id, owner, other } = await ownedTask('silent');
  // The other poller may judge: a window into its own run of heartbeats.
  await awaitWorker(
    other.workerId,
    'alive_since < now() - make_interval(secs => $2::float8 / 1000)',
    deadAfter,
    'the other poller to be a dead-after window into its run',
  );

  owner.pause();
  await awaitWorker(
    owner.workerId,
    'heartbeat_at < now() - make_interval(secs => $2::float8 * 1.5 / 1000)',
    deadAfter,
    "the owner's heartbeat to be a window and a half old",
  );
  const held = await pinnedRow(id);
  owner.resume();
  expect([held.status, held.error_code]).toEqual(['working', null]);
  const [suspicion] = await fleet.db.query<{ suspected: boolean }>(
    `SELECT suspected_at IS NOT NULL AS suspected FROM workers WHERE id = $1`,
    [owner.workerId],
  );
  expect(suspicion.suspected).toBe(true);

  await expectOwnerKeeps(id, held.poll_count, owner, other);
}, 90_000);
