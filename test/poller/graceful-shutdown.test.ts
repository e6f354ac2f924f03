// Guards invariant 8: SIGTERM drains or releases in-flight work without an error, and others continue at once.
import { useFleet } from '../helpers/fleet';
import {
  insertFleetTasks,
  submitViolations,
  taskStates,
  waitAllTerminal,
} from '../helpers/fleet-tasks';
import { attemptLines } from '../helpers/poller-logs';
import {
  demoServerEntry,
  startDemoServer,
  writeServersFile,
  waitForExit,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet({ perTest: true });

it('releases stuck claims due now with no error count; the other poller takes them at once', async () => {
  const demo = await startDemoServer();
  // An 8 s call deadline under a 10 s lease: a stuck call is still stuck, not timed out, when
  // the 400 ms drain aborts it, however slowly a loaded machine delivers the SIGTERM. Room for
  // every task (64 slots and calls): the polls on the wire when the upstream freezes hang too,
  // and with the defaults (8) they could fill the poller, so that it claimed nothing after the
  // freeze until their deadline passed and they ended transient_error (a CI run failed so).
  const leavingEntry = demoServerEntry(demo.url, 'demo-ordinary', { maxConcurrentCalls: 64 });
  const leaving = await fleet.poller(
    writeServersFile({ demo: { ...leavingEntry, callTimeoutMs: 8000 } }),
    {
      env: { DRAIN_TIMEOUT_MS: '400', LEASE_MS: '10000', WORKER_SLOTS: '64' },
    },
  );
  // The staying poller's own polls hang on the frozen upstream too: room for 64 calls keeps that
  // server unsaturated on it (what is measured is the wake-up, not the per-server cap), and a
  // 20 s call deadline keeps its own timeouts out of the error counts checked below. So does an
  // 8 s connect deadline (the two fit its 30 s lease): resumed from its pause, it may reconnect
  // to the frozen upstream and poll a released task before those counts are read (a slow host's
  // CI run counted "connect and initialize did not finish within 1000 ms" on one).
  const stayingEntry = demoServerEntry(demo.url, 'demo-ordinary', { maxConcurrentCalls: 64 });
  const staying = await fleet.poller(
    writeServersFile({
      demo: { ...stayingEntry, callTimeoutMs: 20_000, connectTimeoutMs: 8_000 },
    }),
    {
      // No fallback claim within the test: it learns of the released rows from NOTIFY (or a
      // due time of its own), not from a periodic sweep.
      env: { WORKER_SLOTS: '64', LEASE_MS: '30000', CLAIM_FALLBACK_INTERVAL_MS: '600000' },
    },
  );
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 30 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 3000, tag: `term-${i}` },
    })),
  );
  await waitUntil(
    async () =>
      [...(await taskStates(fleet.db, ids)).values()].every((s) => s.status === 'working')
        ? true
        : undefined,
    'all submitted',
  );
  // Freeze the upstream so the leaving poller's polls cannot finish inside its drain window.
  // The staying poller is paused meanwhile, so the rows that come due go to the leaving one: with
  // room for every task, the staying poller could otherwise take them all first and leave the
  // leaving one nothing stuck to release (a full CI run failed so).
  staying.pause();
  demo.child.kill('SIGSTOP');
  const [{ frozen_at: frozenAt }] = await fleet.db.query<{ frozen_at: Date }>(
    `SELECT now() AS frozen_at`,
  );
  let held: string[] = [];
  try {
    // Claims taken after the freeze (lease 10 s) and at most a second ago: their calls went to a
    // stopped server, so they are stuck, and the 400 ms drain aborts them well inside their
    // 8 s call deadline. A claim merely seen held may be one whose answer was already on its
    // way when the freeze came: it settles `ok` and the drain has nothing to abort (the race
    // that made this test flaky on a loaded machine).
    const heldRows = await waitUntil(async () => {
      const rows = await fleet.db.query<{ id: string; lease_expires_at: Date }>(
        `SELECT id, lease_expires_at FROM task_rows WHERE lease_owner = $1
            AND lease_expires_at > $2::timestamptz + interval '10000 ms'
            AND lease_expires_at > now() + interval '9000 ms'`,
        [leaving.workerId, frozenAt],
      );
      return rows.length > 0 ? rows : undefined;
    }, 'the leaving poller holding claims stuck on the frozen upstream');
    held = heldRows.map((r) => r.id);
    staying.resume();
    const code = await leaving.terminate(10_000);
    expect(code).toBe(0);
    // Released due now, no error counted, no lease left behind.
    const released = await taskStates(fleet.db, held);
    for (const s of released.values()) {
      expect([s.consecutive_errors, s.last_error]).toEqual([0, null]);
      expect(s.lease_owner === leaving.workerId).toBe(false);
    }
    // The staying poller takes them because they were released due now, not because the leases
    // ran out: before the leaving poller's lease would have ended (database clock on both).
    const [taken] = await waitUntil(
      async () => {
        const rows = await fleet.db.query<{ id: string; claimed_at: Date }>(
          `SELECT id, lease_expires_at - interval '30000 ms' AS claimed_at FROM task_rows
            WHERE id = ANY($1) AND lease_owner = $2`,
          [held, staying.workerId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      'the other poller to take a released claim',
      9_000,
      10,
    );
    const leftAt = heldRows.find((r) => r.id === taken.id)!.lease_expires_at;
    expect(taken.claimed_at.getTime()).toBeLessThan(leftAt.getTime());
  } finally {
    staying.resume();
    demo.child.kill('SIGCONT');
  }
  const lines = attemptLines([leaving]);
  // Shown whole on a failure: the phase, how long the attempt ran (an 8 s one hit its call
  // deadline) and when it ended against the freeze.
  const unexpected = lines
    .filter((l) => l.outcome !== 'ok' && l.outcome !== 'aborted')
    .map((l) => ({ ...l, ms: l.end - l.start, endedAfterFreezeMs: l.end - frozenAt.getTime() }));
  expect(unexpected).toEqual([]);
  // Each stuck claim was aborted by the drain, not finished or timed out.
  const aborted = new Set(lines.filter((l) => l.outcome === 'aborted').map((l) => l.taskId));
  expect(held.filter((id) => !aborted.has(id))).toEqual([]);
  await waitAllTerminal(fleet.db, ids);
  expect(await submitViolations(fleet.db, ids, (await demo.stats()).by_tag)).toEqual([]);
  const states = [...(await taskStates(fleet.db, ids)).values()];
  expect(states.filter((s) => s.status !== 'completed')).toEqual([]);
});

it('a second SIGTERM exits at once, without waiting for the drain', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const poller = await fleet.poller(serversFile, {
    env: { DRAIN_TIMEOUT_MS: '60000' },
  });
  await insertFleetTasks(fleet.db, [
    { toolset: 'demo-ordinary', server: 'demo', input: { duration_ms: 0, fault: 'hang_submit' } },
  ]);
  await waitUntil(async () => {
    const rows = await fleet.db.query(`SELECT 1 FROM task_rows WHERE lease_owner = $1`, [
      poller.workerId,
    ]);
    return rows.length > 0 ? true : undefined;
  }, 'a claim in flight');
  poller.child.kill('SIGTERM');
  await waitUntil(
    () => (poller.logs.some((l) => l.msg === 'draining') ? true : undefined),
    'draining',
  );
  const second = Date.now();
  poller.child.kill('SIGTERM');
  // Far inside the 60 s drain, with room for a slow host.
  expect(await waitForExit(poller.child, 10_000)).toBe(true);
  expect(Date.now() - second).toBeLessThan(10_000);
  expect(poller.child.exitCode).toBe(1);
});
