// Guards invariant 6 through a database outage: a submit answered while Postgres is down keeps
// its remote handle (the write is retried until the lease's expiry), and the task completes
// instead of ending outcome_uncertain with its upstream work orphaned.
import { insertFleetTasks, submitViolations, waitSubmitStarted } from '../helpers/fleet-tasks';
import {
  demoServerEntry,
  startDemoServer,
  startPoller,
  writeServersFile,
} from '../helpers/processes';
import { awaitUpstreamReady } from '../helpers/poller-logs';
import { useOwnPostgres } from '../helpers/postgres-process';
import { waitUntil } from '../helpers/wait';

const postgres = useOwnPostgres('handle', 2);

/** The poller's last few log messages, for a timeout's error. */
function recentMessages(logs: Record<string, unknown>[]): string {
  return JSON.stringify(logs.slice(-12).map((l) => [l.msg, l.err ?? l.reason ?? l.to]));
}

it('stores a handle that arrives while Postgres is down, once it is back within the lease', async () => {
  const db = postgres.db;
  const demo = await startDemoServer();
  // A 20 s lease and a 15 s call deadline: the submit can wait out the freeze below, and the
  // handle write has the rest of the lease to land.
  const entry = demoServerEntry(demo.url, 'demo-ordinary');
  const poller = await startPoller({
    databaseUrl: postgres.url,
    serversFile: writeServersFile({ demo: { ...entry, callTimeoutMs: 15_000 } }),
    env: { LEASE_MS: '20000' },
  });
  // The poller's session with the upstream first: a connect to the frozen server below would
  // time out (connectTimeoutMs 1 s) before the database is down, and the submit not go out.
  await awaitUpstreamReady([poller], 'demo');
  // The upstream holds the submit (frozen) until the database is down.
  demo.child.kill('SIGSTOP');
  const [id] = await insertFleetTasks(db, [
    {
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 500, tag: 'handle-outage' },
    },
  ]);
  try {
    await waitSubmitStarted(db, id);
    await postgres.stop();
  } finally {
    demo.child.kill('SIGCONT');
  }
  // The answer arrives now, with the database down: the first handle writes fail.
  await waitUntil(
    () =>
      poller.logs.some((l) => l.msg === 'storing the remote handle failed; retrying')
        ? true
        : undefined,
    () => `a failed handle write; the poller logged: ${recentMessages(poller.logs)}`,
    // A write can wait out the pool's 10 s connection timeout while the server shuts down.
    40_000,
  );
  // Longer than the old budget (8 × 250 ms) before the database comes back.
  await waitUntil(
    () =>
      poller.logs.filter((l) => l.msg === 'storing the remote handle failed; retrying').length >= 4
        ? true
        : undefined,
    'the handle write retried past the old budget',
    40_000,
  );
  await postgres.restart();
  const after = postgres.db;
  const final = await waitUntil(
    async () => {
      const rows = await after.query<{ status: string; error_code: string | null }>(
        `SELECT status, error_code FROM tasks WHERE id = $1
            AND status IN ('completed', 'failed', 'cancelled')`,
        [id],
      );
      return rows[0];
    },
    'the task terminal',
    60_000,
    200,
  );
  expect(final).toEqual({ status: 'completed', error_code: null });
  expect(await submitViolations(after, [id], (await demo.stats()).by_tag)).toEqual([]);
  expect(poller.logs.filter((l) => l.level === 'error' || l.level === 50)).toEqual([]);
});
