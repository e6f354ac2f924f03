// Guards against a Postgres restart mid-run killing pollers or losing tasks: they reconnect and finish.
import {
  insertFleetTasks,
  submitViolations,
  waitAllTerminal,
  waitNoPollerStatement,
} from '../helpers/fleet-tasks';
import {
  PollerProcess,
  demoServerEntry,
  startDemoServer,
  startPoller,
  writeServersFile,
} from '../helpers/processes';
import { useOwnPostgres } from '../helpers/postgres-process';
import { waitUntil } from '../helpers/wait';

const postgres = useOwnPostgres('restart', 4);

/** How many claims the poller has logged as failed so far. */
function claimFailures(poller: PollerProcess): number {
  return poller.logs.filter((l) => l.msg === 'claim failed').length;
}

it('pollers ride out a Postgres restart and every task still ends, submitted once', async () => {
  const db = postgres.db;
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const pollers = await Promise.all(
    [1, 2].map(() => startPoller({ databaseUrl: postgres.url, serversFile })),
  );
  const ids = await insertFleetTasks(
    db,
    Array.from({ length: 80 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 3000 + (i % 4) * 500, tag: `pg-${i}` },
    })),
  );
  await waitUntil(async () => {
    const rows = await db.query(`SELECT 1 FROM tasks WHERE status = 'working' LIMIT 1`);
    return rows.length > 0 ? true : undefined;
  }, 'work under way');
  // Frozen while the database goes down, so the submits on the wire at that moment are known:
  // they alone may honestly end outcome_uncertain (no submit starts while it is down). A
  // statement sent just before the freeze still commits: the snapshot waits for it, or a submit
  // mark landing after it would be on the wire and missing from the list.
  for (const poller of pollers) poller.pause();
  await waitNoPollerStatement(db);
  const onTheWire = await db.query<{ id: string }>(
    `SELECT id FROM tasks WHERE id = ANY($1) AND submit_started_at IS NOT NULL
        AND remote_task_id IS NULL AND completed_at IS NULL`,
    [ids],
  );
  const claimFailuresBefore = pollers.map(claimFailures);
  await postgres.stop();
  for (const poller of pollers) poller.resume();
  // Down until every poller has seen it: a claim of each failed (so did its heartbeats and
  // writes meanwhile), and it kept running.
  await waitUntil(
    () =>
      pollers.every((poller, i) => claimFailures(poller) > claimFailuresBefore[i])
        ? true
        : undefined,
    'a failed claim in every poller while the database is down',
    30_000,
  );
  await postgres.restart();
  const after = postgres.db;
  await waitAllTerminal(after, ids, 'every task terminal after the restart', 60_000, 200);
  for (const poller of pollers) expect(poller.child.exitCode).toBeNull();
  expect(await submitViolations(after, ids, (await demo.stats()).by_tag)).toEqual([]);
  const notCompleted = await after.query<{ id: string; status: string; error_code: string }>(
    `SELECT id, status, error_code FROM tasks WHERE id = ANY($1) AND status <> 'completed'`,
    [ids],
  );
  // Every other task completes; only a submit on the wire at the outage may end otherwise
  // (submitViolations above: then failed/outcome_uncertain, never anything else).
  const allowed = new Set(onTheWire.map((r) => r.id));
  expect(notCompleted.filter((r) => !allowed.has(r.id))).toEqual([]);
});
