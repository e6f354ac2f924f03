// Guards invariant 3: a SIGKILLed poller's tasks are attempted again within lease + poll interval, ordinary ones and 2026-07-28 ones on a strict server.
import { useFleet } from '../helpers/fleet';
import {
  insertFleetTasks,
  submitViolations,
  taskStates,
  waitAllTerminal,
} from '../helpers/fleet-tasks';
import {
  demoServerEntry,
  demoTasksEntry,
  FAST_POLLER_ENV,
  startDemoServer,
  writeServersFile,
} from '../helpers/processes';
import { attemptLines } from '../helpers/poller-logs';
import { killAndDrain } from '../helpers/backends';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet({ perTest: true });
const LEASE_MS = Number(FAST_POLLER_ENV.LEASE_MS);
const POLL_MS = Number(FAST_POLLER_ENV.POLL_INTERVAL_MS);
// Process scheduling and timer slack on a loaded 2-core box (measured from the lease's end,
// database clock, not from the test's own polling).
const SLACK_MS = 2000;
// Log times are whole milliseconds; the database's are microseconds.
const CLOCK_GRAIN_MS = 2;

it('a survivor re-attempts every claim of the killed poller in time, and all end right', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const victim = await fleet.poller(serversFile);
  const survivor = await fleet.poller(serversFile);
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 60 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 2500, tag: `kill-${i}` },
    })),
  );
  let killedAt = 0;
  const held = await waitUntil(async () => {
    const rows = await fleet.db.query<{ id: string; claim_count: number }>(
      `SELECT id, claim_count FROM task_rows WHERE lease_owner = $1 AND lease_expires_at > now()`,
      [victim.workerId],
    );
    if (rows.length < 3) return undefined;
    killedAt = Date.now();
    await killAndDrain(victim, fleet.db);
    return rows;
  }, 'the victim holding claims');
  // Rows it held at the kill, read once no statement of it runs any more: a write sent just
  // before the kill still lands (a phase's release, after which the survivor may claim the row
  // at once).
  const orphans = await fleet.db.query<{ id: string; lease_expires_at: Date }>(
    `SELECT id, lease_expires_at FROM task_rows
      WHERE lease_owner = $1 AND next_attempt_at IS NOT NULL`,
    [victim.workerId],
  );
  expect(held.length).toBeGreaterThan(0);
  expect(orphans.length).toBeGreaterThan(0);
  // The survivor's first attempt on each orphan after the kill, from its own log (it may have
  // run an earlier phase of the same task, before the victim claimed it: not a rescue).
  const firstAttempts = await waitUntil(
    () => {
      const lines = attemptLines([survivor]);
      const first = new Map<string, number>();
      for (const { id } of orphans) {
        const starts = lines
          .filter((l) => l.taskId === id && l.start >= killedAt)
          .map((l) => l.start);
        if (starts.length === 0) return undefined;
        first.set(id, Math.min(...starts));
      }
      return first;
    },
    'every orphan attempted again',
    LEASE_MS + POLL_MS + 15_000,
  );
  for (const { id, lease_expires_at: expiry } of orphans) {
    const at = firstAttempts.get(id)!;
    // Never while the killed poller's lease lived (same host clock as the database)...
    expect(at).toBeGreaterThanOrEqual(expiry.getTime() - CLOCK_GRAIN_MS);
    // ...and soon after it ran out: the survivor sleeps until the earliest due time it knows.
    expect(at - expiry.getTime()).toBeLessThanOrEqual(POLL_MS + SLACK_MS);
  }
  await waitAllTerminal(fleet.db, ids);
  expect(await submitViolations(fleet.db, ids, (await demo.stats()).by_tag)).toEqual([]);
  expect(survivor.child.exitCode).toBeNull();
});

it('a survivor finishes the 2026-07-28 tasks a killed poller held on a strict server', async () => {
  // --strict-2026 refuses initialize (-32020): the tasks live only on the stateless side.
  const demo = await fleet.demo(['--strict-2026']);
  const serversFile = writeServersFile({
    strict: demoTasksEntry(demo.url, { 'strict-tasks': 'demo_task' }, { pinned: true }),
  });
  const victim = await fleet.poller(serversFile);
  const survivor = await fleet.poller(serversFile);
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 16 }, (_, i) => ({
      toolset: 'strict-tasks',
      server: 'strict',
      contract: 'mcp-tasks' as const,
      input: { duration_ms: 4000, tag: `strict-kill-${i}` },
    })),
  );
  // Killed while it holds tasks it already made upstream (a remote handle is stored). Its claims
  // are brief polls, so the upstream is frozen once every task is made there: a poll claimed
  // then holds its lease until its call times out, long enough to be seen. The victim is stopped
  // and its rows read under lock, which waits for any statement of it already running on them;
  // a stopped process sends nothing more, and killAndDrain waits out what it had sent.
  await waitUntil(async () => {
    const [{ n }] = await fleet.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1) AND remote_task_id IS NOT NULL`,
      [ids],
    );
    return n === ids.length ? true : undefined;
  }, 'every task made upstream');
  const heldByVictim = `SELECT l.task_id AS id
      FROM task_leases l JOIN tasks t ON t.id = l.task_id
     WHERE l.lease_owner = $1 AND l.lease_expires_at > now() AND t.remote_task_id IS NOT NULL`;
  demo.child.kill('SIGSTOP');
  let orphans: string[];
  // Before the rows are read under lock, while the victim's leases on them are live: no survivor
  // attempt on them can start earlier. (The kill and drain after it can outlast those leases on
  // a loaded machine, so the moment of the kill is too late a bound.)
  let lockedAt = 0;
  try {
    orphans = await waitUntil(async () => {
      if ((await fleet.db.query(heldByVictim, [victim.workerId])).length === 0) return undefined;
      victim.pause();
      lockedAt = Date.now();
      const rows = await fleet.db.query<{ id: string }>(`${heldByVictim} FOR UPDATE OF l`, [
        victim.workerId,
      ]);
      if (rows.length === 0) {
        victim.resume();
        return undefined;
      }
      await killAndDrain(victim, fleet.db);
      return rows.map((row) => row.id);
    }, 'the victim holding 2026 tasks it made upstream');
  } finally {
    demo.child.kill('SIGCONT');
  }
  // A statement the victim sent before the stop that had not reached its rows when they were
  // read (a poll's answer taken just before the freeze) has landed now, its backends gone: a task
  // it ended that way is not an orphan.
  const endedByVictim = new Set(
    (
      await fleet.db.query<{ id: string }>(
        `SELECT id FROM tasks WHERE id = ANY($1) AND completed_at IS NOT NULL`,
        [orphans],
      )
    ).map((row) => row.id),
  );
  orphans = orphans.filter((id) => !endedByVictim.has(id));
  expect(orphans.length).toBeGreaterThan(0);
  await waitAllTerminal(fleet.db, ids);
  const states = await taskStates(fleet.db, orphans);
  expect(orphans.map((id) => [id, states.get(id)?.status])).toEqual(
    orphans.map((id) => [id, 'completed']),
  );
  // Finished by the survivor, not by a write the victim sent before it died.
  const rescued = new Set(
    attemptLines([survivor])
      .filter((line) => line.start >= lockedAt)
      .map((line) => line.taskId),
  );
  expect(orphans.filter((id) => !rescued.has(id))).toEqual([]);
  expect(await submitViolations(fleet.db, ids, (await demo.stats()).by_tag)).toEqual([]);
  expect(survivor.child.exitCode).toBeNull();
});
