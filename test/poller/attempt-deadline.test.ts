// Guards invariant 5 against an attempt that outlives its lease (docs/leases.md, "Attempt
// deadlines"): a poller whose submit was held up past its lease (here by a stalled database
// write) must not go on to connect and send it once a second poller has taken the row over.
import { Client } from 'pg';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { attemptLines } from '../helpers/poller-logs';
import { useOwnPostgres } from '../helpers/postgres-process';
import { startDemoServer, startPoller, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// Each connect (initialize) takes 3 s, within its 4 s timeout, so a native submit over HTTP
// spends 3 s opening its task session: time enough for the row, due again since the lease
// expired, to be claimed and submitted by another attempt (the second poller's, within its 1 s
// fallback interval, or the first poller's own next one). The worst chain (a native cancel: a
// connect and three calls, 11.5 s) fits the 12 s lease minus its 0.4 s margin, so both boot. The
// call's 2.5 s bound leaves a loaded machine time to answer: a submit that timed out would be
// repeated (retryOnCrash), a second submit that is not the one this test looks for. The
// stalled write must outlast the lease, so the statement bound (10 s by default) is raised.
const ENV = { LEASE_MS: '12000', DATABASE_STATEMENT_TIMEOUT_MS: '120000' };
const STALL_LOCK = 4242;

// Its own server: the stalled write holds a transaction ID open for seconds, and the event
// streams of every database on a server wait for the oldest running one (docs/events.md), so on
// the shared server it would stall other test files' SSE and webhook deliveries.
const database = useOwnPostgres('attempt-deadline', 4);
let stall: Client;

beforeAll(async () => {
  // The one fault we cannot produce for real at the right instant: the write that records a
  // submit as started stalls (a slow disk, a lock) while the lease runs out.
  await database.db.query(`
    CREATE FUNCTION stall_submit_start() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.submit_started_at IS NOT NULL AND OLD.submit_started_at IS NULL THEN
        PERFORM pg_advisory_xact_lock(${STALL_LOCK});
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER stall_submit_start BEFORE UPDATE ON tasks
      FOR EACH ROW EXECUTE FUNCTION stall_submit_start();`);
  stall = new Client({ connectionString: database.url });
  // The server may stop before this client ends (afterAll order).
  stall.on('error', () => undefined);
  await stall.connect();
});
// The demo server and pollers stop with the file's process scope, which useOwnPostgres opened
// (docs/testing.md, "Processes go through a fixture").
afterAll(() => stall.end().catch(() => undefined));

it('a submit held up past its lease is cut by its deadline: the row is submitted once', async () => {
  const demo = await startDemoServer(['--slow-initialize-ms', '3000']);
  const serversFile = writeServersFile({
    demo: {
      url: `${demo.url}/mcp`,
      protocolVersion: '2025-11-25',
      connectTimeoutMs: 4000,
      callTimeoutMs: 2500,
      taskToolsets: [
        // Repeating the submit is declared safe, so the second poller submits again: a submit
        // from the first one as well would be the double submit this test looks for.
        { name: 'native', contract: 'mcp-tasks', tool: 'demo_task_required', retryOnCrash: true },
      ],
    },
  });
  const first = await startPoller({ databaseUrl: database.url, serversFile, env: ENV });
  await stall.query('SELECT pg_advisory_lock($1)', [STALL_LOCK]);
  const tag = `held-up-${Date.now()}`;
  const [id] = await insertFleetTasks(database.db, [
    { toolset: 'native', server: 'demo', contract: 'mcp-tasks', input: { tag, duration_ms: 500 } },
  ]);
  await waitUntil(
    async () => {
      const waiting = await database.db.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event = 'advisory'`,
      );
      return waiting.length > 0 ? true : undefined;
    },
    "the first poller's submit-started write to stall",
    20_000,
  );
  const [claim] = await database.db.query<{ lease_owner: string }>(
    `SELECT lease_owner FROM task_rows WHERE id = $1`,
    [id],
  );
  expect(claim.lease_owner).toBe(first.workerId);
  await waitUntil(
    async () => {
      const [row] = await database.db.query<{ expired: boolean }>(
        `SELECT lease_expires_at <= now() AS expired FROM task_rows WHERE id = $1`,
        [id],
      );
      return row.expired ? true : undefined;
    },
    "the first poller's lease to expire",
    30_000,
  );
  const second = await startPoller({ databaseUrl: database.url, serversFile, env: ENV });

  // The stalled write now lands (it began while the lease was live); the first poller goes on
  // with an attempt whose deadline has passed.
  await stall.query('SELECT pg_advisory_unlock($1)', [STALL_LOCK]);
  const ended = await waitUntil(
    () => attemptLines([first]).find((line) => line.taskId === id),
    "the first poller's attempt to end",
    30_000,
  );
  await waitUntil(
    async () => {
      const [row] = await database.db.query<{ status: string }>(
        `SELECT status FROM tasks WHERE id = $1`,
        [id],
      );
      return row.status === 'completed' ? true : undefined;
    },
    'the second poller to finish the task',
    60_000,
  );

  // Past its deadline, it sent nothing (docs/leases.md, "Time to send a submit"), and its
  // give-back found the lease gone.
  expect(ended).toMatchObject({ phase: 'submit', outcome: 'lease_lost' });
  // One submit reached the upstream, from whichever poller claimed the row next.
  expect((await demo.stats(tag)).by_tag[tag]?.submits).toBe(1);
  const submitted = attemptLines([first, second]).filter(
    (line) => line.taskId === id && line.phase === 'submit' && line.outcome === 'ok',
  );
  expect(submitted).toHaveLength(1);
});
