// Guards a held call, and the end of a call that cannot be repeated, through a database outage
// longer than the lease (docs/leases.md, "A call's end"): nobody claimed the row meanwhile, so
// its token is still ours; the guard renews under it, the end is stored under it, and this
// process never rescues its own lease. A second poller, idle through the outage, holds its
// rescues once the database is back (docs/leases.md, "Rescues after an outage"), so it does not
// take the row before the holder renews it. The task completes, called once and claimed once.
import { insertFleetTasks, waitCallReceived, waitTaskEnd } from '../helpers/fleet-tasks';
import { useOwnPostgres } from '../helpers/postgres-process';
import { startDemoServer, startPoller, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// Short leases (a held call's renewed every 1.3 s), so that an outage outlasts them in seconds.
const LEASE_MS = 4000;
// A 2026-07-28 poll is two calls, which must fit the lease with the attempt margin.
const PINNED_2026 = { protocolVersion: '2026-07-28', callTimeoutMs: 2800, leaseMs: 6000 };
const postgres = useOwnPostgres('call-end-past-lease', 4);

type Case = [
  name: string,
  toolset: Record<string, unknown>,
  path: string,
  contract: 'sync-call' | 'mcp-tasks',
  /** The server's settings and the lease, where they differ from the held calls'. */
  server: { protocolVersion?: string; callTimeoutMs?: number; leaseMs?: number },
  durationMs: number,
  /** The poller's log line that shows the outage has outlasted the lease. */
  outlasted: string,
  /** The line that shows which way the claim was kept past its lease. */
  kept: string,
];

const HELD_LEASE_RAN_OUT =
  "the held call's lease ran out while the database was unavailable; " +
  'renewing it under its token once the database is back';
const END_PAST_LEASE = "the call's end outlasted its lease: storing it while the task is ours";
const STORED_LATE = "stored the call's end after its lease expired: no other claim meanwhile";
const RESCUES_HELD =
  'the database is back: leases that ran out while it was unreachable are left to their ' +
  'holders to renew before this worker rescues them';

const CASES: Case[] = [
  [
    'a held call that answers during the outage',
    { name: 'held', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60_000 },
    '/mcp',
    'sync-call',
    {},
    1000,
    HELD_LEASE_RAN_OUT,
    // Its answer waits in memory; the write that lands is the late one, or the fenced one
    // after the guard's late renewal, whichever runs first once the database is back.
    '',
  ],
  [
    'a held call still running when the database is back',
    { name: 'long', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60_000 },
    '/mcp',
    'sync-call',
    {},
    // Longer than the lease and the restart: it answers after both.
    20_000,
    HELD_LEASE_RAN_OUT,
    'renewed the lease after it expired: no other claim took the row meanwhile',
  ],
  [
    'a submit answered at once (2026-07-28, no task made)',
    { name: 'answered', contract: 'mcp-tasks', tool: 'demo_slow' },
    '/mcp-2026',
    'mcp-tasks',
    PINNED_2026,
    1000,
    END_PAST_LEASE,
    STORED_LATE,
  ],
];

it.each(CASES)(
  '%s is stored under its own claim after an outage longer than the lease',
  async (
    _,
    toolset,
    path,
    contract,
    { leaseMs = LEASE_MS, ...server },
    durationMs,
    outlasted,
    kept,
  ) => {
    const demo = await startDemoServer();
    const name = toolset.name as string;
    const serversFile = writeServersFile({
      demo: {
        url: `${demo.url}${path}`,
        connectTimeoutMs: 1500,
        callTimeoutMs: 3500,
        ...server,
        taskToolsets: [toolset],
      },
    });
    const [poller, other] = await Promise.all(
      [1, 2].map(() =>
        startPoller({ databaseUrl: postgres.url, serversFile, env: { LEASE_MS: String(leaseMs) } }),
      ),
    );
    // The other poller is stopped (SIGSTOP) until the first has the task on the wire, so that
    // the first claims it; continued before the outage, it claims again when the lease runs out.
    other.pause();
    const tag = `past-lease-${name}-${Date.now()}`;
    const [id] = await insertFleetTasks(postgres.db, [
      { toolset: name, server: 'demo', contract, input: { duration_ms: durationMs, tag } },
    ]);
    await waitCallReceived(demo, tag);
    other.resume();
    await postgres.stop();
    await waitUntil(
      () => (poller.logs.some((line) => line.msg === outlasted) ? true : undefined),
      'the outage to outlast the lease',
      30_000,
    );
    await postgres.restart();
    const ended = await waitTaskEnd(postgres.db, id);
    expect(ended).toEqual({ status: 'completed', error_code: null, claim_count: 1 });
    const stats = await demo.stats(tag);
    expect(stats.sync.completed).toBe(1);
    // The poller logs its line after the commit the test saw: waited for, not read at once.
    if (kept) {
      await waitUntil(
        () => (poller.logs.some((l) => l.msg === kept) ? true : undefined),
        `the poller's line "${kept}"`,
        15_000,
      );
    }
    expect(poller.logs.filter((l) => /could not be stored/.test(String(l.msg)))).toEqual([]);
    // The other poller did meet the outage and hold its rescues: the claim count above is
    // that hold at work, not a poller that never tried.
    await waitUntil(
      () => (other.logs.some((l) => l.msg === RESCUES_HELD) ? true : undefined),
      "the other poller's hold on rescues",
      15_000,
    );
    await Promise.all([poller.kill(), other.kill()]);
  },
  120_000,
);
