// Guards sync-call: a call held longer than its lease is renewed, cancellable, and never silently repeated after a crash.
import { freePort } from '@app/dev-db';
import { TaskRepository } from '@app/persistence';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { attemptLines, awaitAttemptLines, awaitUpstreamReady } from '../helpers/poller-logs';
import { ServerEntry, startDemoServer, waitForExit, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// 4 s (renewed every 1.3 s): a renewal late by a whole lease on a loaded machine would hand the
// row to the other poller, which is not what these tests are about.
const LEASE_MS = 4000;
// Connect + call timeouts must stay below the lease (startup check); the held call has its own.
const POLLER_ENV = { LEASE_MS: String(LEASE_MS) };

const fleet = useFleet({ perTest: true });

/** A server entry binding demo_slow as a sync-call toolset named `toolset`. */
function syncEntry(url: string, toolset: string, retryOnCrash: boolean): ServerEntry {
  return {
    url: `${url}/mcp`,
    connectTimeoutMs: 1000,
    callTimeoutMs: 900,
    maxConcurrentCalls: 8,
    taskToolsets: [
      {
        name: toolset,
        contract: 'sync-call',
        tool: 'demo_slow',
        callTimeoutMs: 60_000,
        retryOnCrash,
      },
    ],
  };
}

interface HeldRow {
  status: string;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  claim_count: number;
  progress: { current?: number; total?: number; message?: string } | null;
  submitted_at: Date | null;
  completed_at: Date | null;
  error_code: string | null;
  error_message: string | null;
}
async function heldRow(id: string): Promise<HeldRow> {
  const rows = await fleet.db.query<HeldRow>(
    `SELECT status, lease_owner, lease_expires_at, claim_count, progress, submitted_at, completed_at,
            error_code, error_message
       FROM task_rows WHERE id = $1`,
    [id],
  );
  return rows[0];
}

it('a call outliving several leases completes under one renewed claim, with bounded progress', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: syncEntry(demo.url, 'slow', false) });
  const pollers = await Promise.all([
    fleet.poller(serversFile, { env: POLLER_ENV }),
    fleet.poller(serversFile, { env: POLLER_ENV }),
  ]);
  // A claim made while a poller's first session is still connecting can fail its 1 s connect
  // on a loaded machine and be claimed again: not the claim count this test is about.
  await awaitUpstreamReady(pollers, 'demo');
  const DURATION_MS = 10_000;
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'slow',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: DURATION_MS, tag: 'held' },
    },
  ]);
  const samples: HeldRow[] = [];
  await waitUntil(
    async () => {
      const row = await heldRow(id);
      if (row.status === 'working') samples.push(row);
      return row.status === 'completed' || row.status === 'failed' ? row : undefined;
    },
    'the held call to end',
    DURATION_MS + 10_000,
    100,
  );
  const final = await heldRow(id);
  expect([final.status, final.error_code, final.error_message]).toEqual(['completed', null, null]);
  // One claim for the whole call: nobody else took the row while it was held.
  expect(final.claim_count).toBe(1);
  expect(new Set(samples.map((s) => s.lease_owner)).size).toBe(1);
  const holder = samples[0].lease_owner;
  expect(pollers.map((p) => p.workerId)).toContain(holder);
  const other = pollers.find((p) => p.workerId !== holder)!;
  expect(attemptLines([other]).filter((l) => l.taskId === id)).toEqual([]);
  // The lease moved forward while the call ran (renewed every lease/3), well past the first one.
  const expiries = samples.map((s) => s.lease_expires_at!.getTime());
  const renewals = expiries.filter((t, i) => i > 0 && t > expiries[i - 1]).length;
  expect(renewals).toBeGreaterThanOrEqual(Math.floor(DURATION_MS / LEASE_MS));
  expect(expiries.at(-1)! - expiries[0]).toBeGreaterThan(DURATION_MS - LEASE_MS);
  expect(final.completed_at!.getTime() - final.submitted_at!.getTime()).toBeGreaterThanOrEqual(
    DURATION_MS - 100,
  );
  // Progress notifications were stored while it ran, growing, within their bounds.
  const progress = samples.map((s) => s.progress).filter((p) => p !== null);
  expect(progress.length).toBeGreaterThan(3);
  const currents = progress.map((p) => p.current ?? -1);
  expect(currents.at(-1)!).toBeGreaterThan(currents[0]);
  for (const p of [...progress, final.progress!]) {
    expect(p.total).toBe(DURATION_MS);
    expect(p.current).toBeGreaterThanOrEqual(0);
    expect(p.current).toBeLessThanOrEqual(DURATION_MS);
    expect((p.message ?? '').length).toBeLessThanOrEqual(500);
  }
  const stats = await demo.stats('held');
  expect(stats.by_tag.held.submits).toBe(1);
  expect(stats.sync.completed).toBe(1);
});

it('a cancel request aborts the held call upstream and ends the task cancelled', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: syncEntry(demo.url, 'slow', false) });
  await fleet.poller(serversFile, { env: POLLER_ENV });
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'slow',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 30_000, tag: 'cut' },
    },
  ]);
  await waitUntil(
    async () => ((await demo.stats('cut')).sync.calls === 1 ? true : undefined),
    'the call to reach the server',
  );
  // Outlive one lease first, so what is cancelled is a renewed claim.
  const claimedExpiry = (await heldRow(id)).lease_expires_at!.getTime();
  await waitUntil(
    async () =>
      (await heldRow(id)).lease_expires_at!.getTime() > claimedExpiry ? true : undefined,
    'a renewal',
  );
  const result = await new TaskRepository(fleet.db).requestCancel('user-1', id);
  expect(result.kind).toBe('accepted');
  const requestedAt = Date.now();
  const row = await waitUntil(
    async () => {
      const state = (await taskStates(fleet.db, [id])).get(id)!;
      return state.status === 'working' ? undefined : state;
    },
    'the task to end',
    10_000,
  );
  // NOTIFY → immediate check; the renewal alone would take at most lease/3.
  expect(Date.now() - requestedAt).toBeLessThan(2 * LEASE_MS);
  expect([row.status, row.error_code, row.lease_owner]).toEqual(['cancelled', null, null]);
  const stats = await waitUntil(async () => {
    const s = await demo.stats('cut');
    return s.sync.cancelled === 1 ? s : undefined;
  }, 'the server to count the call cancelled');
  expect(stats.sync).toEqual({ calls: 1, completed: 0, cancelled: 1, failed: 0 });
  expect(stats.by_tag.cut.submits).toBe(1);
});

it('a renewal that finds the lease gone aborts the held call upstream', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: syncEntry(demo.url, 'slow', false) });
  const holder = await fleet.poller(serversFile, { env: POLLER_ENV });
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'slow',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 120_000, tag: 'stolen' },
    },
  ]);
  await waitUntil(
    async () => ((await demo.stats('stolen')).sync.calls === 1 ? true : undefined),
    'the call to reach the server',
  );
  // Frozen past its lease: another poller rescues the row (no retryOnCrash: outcome_uncertain,
  // without calling again) while the holder's call is still open upstream.
  holder.pause();
  try {
    await fleet.poller(serversFile, { env: POLLER_ENV });
    const ended = await waitUntil(
      async () => {
        const state = (await taskStates(fleet.db, [id])).get(id)!;
        return state.completed_at ? state : undefined;
      },
      'the rescuer to end the task',
      30_000,
    );
    expect([ended.status, ended.error_code]).toEqual(['failed', 'outcome_uncertain']);
  } finally {
    holder.resume();
  }
  // Thawed, the holder's next renewal finds the lease gone and aborts its call: the server
  // sees it cancelled instead of running it to the end for nobody.
  const stats = await waitUntil(
    async () => {
      const s = await demo.stats('stolen');
      return s.sync.cancelled === 1 ? s : undefined;
    },
    'the held call aborted upstream',
    20_000,
  );
  expect(stats.sync).toMatchObject({ calls: 1, completed: 0, cancelled: 1 });
  expect(stats.by_tag.stolen.submits).toBe(1);
  expect(
    holder.logs.some((l) => l.msg === 'aborting the held call' && l.reason === 'lease_lost'),
  ).toBe(true);
});

it('SIGKILL of the holder: outcome_uncertain without retryOnCrash, run again with it', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({
    demo: syncEntry(demo.url, 'slow', false),
    'demo-retry': syncEntry(demo.url, 'slow-retry', true),
  });
  const [victim, survivor] = await Promise.all([
    fleet.poller(serversFile, { env: POLLER_ENV }),
    fleet.poller(serversFile, { env: POLLER_ENV }),
  ]);
  // Frozen until the victim holds both calls, so the victim is the one holding them.
  survivor.pause();
  const [once, again] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'slow',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 3000, tag: 'once' },
    },
    {
      toolset: 'slow-retry',
      server: 'demo-retry',
      contract: 'sync-call',
      input: { duration_ms: 3000, tag: 'again' },
    },
  ]);
  await waitUntil(
    async () => (await demo.stats()).sync.calls === 2 || undefined,
    'both calls held by the victim',
  );
  survivor.resume();
  const before = await Promise.all([heldRow(once), heldRow(again)]);
  for (const row of before)
    expect([row.status, row.lease_owner]).toEqual(['working', victim.workerId]);
  await victim.kill();
  // Its last lease, as of the kill (a renewal may have landed just before it).
  const leases = await Promise.all([heldRow(once), heldRow(again)]);
  const ends = await waitUntil(
    async () => {
      const states = await taskStates(fleet.db, [once, again]);
      const done = [...states.values()].every((s) => s.completed_at !== null);
      return done ? states : undefined;
    },
    'both tasks to end',
    30_000,
    100,
  );
  const uncertain = ends.get(once)!;
  expect([uncertain.status, uncertain.error_code]).toEqual(['failed', 'outcome_uncertain']);
  // Claimed again after the kill (a loaded machine may add a give-back and one more claim; what
  // matters is that no claim sent the call again: one submit upstream, below).
  expect(uncertain.claim_count).toBeGreaterThanOrEqual(2);
  // Not before the victim's lease ran out (database clock on both sides).
  expect(uncertain.completed_at!.getTime()).toBeGreaterThanOrEqual(
    leases[0].lease_expires_at!.getTime(),
  );
  const rerun = ends.get(again)!;
  expect([rerun.status, rerun.error_code]).toEqual(['completed', null]);
  expect(rerun.claim_count).toBeGreaterThanOrEqual(2);
  // Claimed again once the lease ran out, then held for its whole duration once more.
  expect(rerun.completed_at!.getTime()).toBeGreaterThanOrEqual(
    leases[1].lease_expires_at!.getTime() + 3000 - 100,
  );
  expect((await demo.stats('once')).by_tag.once.submits).toBe(1);
  // Run to completion once by the survivor (a give-back before it would be a second line).
  const survivorLines = await awaitAttemptLines([survivor], again, (lines) =>
    lines.some((l) => l.outcome === 'ok'),
  );
  expect(survivorLines.filter((l) => l.outcome === 'ok')).toHaveLength(1);
  // Sent at least twice: by the victim, and once more after its crash. On a loaded machine an
  // attempt can end without the answer after sending (a renewal too late: lease_lost; a dropped
  // call: transient_error), and the next claim sends it again (retryOnCrash): each such attempt,
  // logged before the survivor's last line, may explain one more send, and nothing else may.
  const failed = attemptLines([victim, survivor]).filter(
    (l) => l.taskId === again && l.outcome !== 'ok',
  );
  const upstreamSends = (await demo.stats('again')).by_tag.again.submits;
  // An attempt refused before sending (its server still connecting: "submit not sent") counted
  // its mark and sent nothing (docs/leases.md, "Ambiguous commits": the unsent release).
  const notSent = [victim, survivor]
    .flatMap((p) => p.logs)
    .filter(
      (l) =>
        l.msg === 'attempt' &&
        l.task_id === again &&
        typeof l.error === 'string' &&
        l.error.startsWith('submit not sent'),
    ).length;
  if (
    rerun.submit_attempts !== 2 + failed.length ||
    upstreamSends !== rerun.submit_attempts - notSent
  ) {
    const lines = (p: typeof victim) => JSON.stringify(p.logs.filter((l) => l.task_id === again));
    process.stderr.write(`victim: ${lines(victim)}\nsurvivor: ${lines(survivor)}\n`);
  }
  expect(rerun.submit_attempts).toBeGreaterThanOrEqual(2);
  expect(rerun.submit_attempts).toBeLessThanOrEqual(2 + failed.length);
  // Every send the gateway counted, less those it refused unsent, reached the upstream, and no
  // other did.
  expect(upstreamSends).toBe(rerun.submit_attempts - notSent);
});

// Guards invariant 8 for held calls: a rolling restart must not fail the sync calls in flight.
it('a draining poller keeps its held call past DRAIN_TIMEOUT_MS, renewing it, until it ends', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: syncEntry(demo.url, 'held-drain', false) });
  // A 12 s lease (renewed every 4 s) over a 6 s call: a loaded machine's late renewal must not
  // be what hands the row over; only the drain is under test here. With a 6 s lease over a 4 s
  // call, a Node 24 run on a loaded 2-core machine saw the row expire and end outcome_uncertain.
  const env = { LEASE_MS: '12000' };
  const leaving = await fleet.poller(serversFile, {
    env: { ...env, DRAIN_TIMEOUT_MS: '200' },
  });
  await awaitUpstreamReady([leaving], 'demo');
  const [id] = await insertFleetTasks(fleet.db, [
    { toolset: 'held-drain', server: 'demo', input: { duration_ms: 6000, tag: 'held-drain' } },
  ]);
  await waitUntil(async () => {
    const rows = await fleet.db.query(
      `SELECT 1 FROM task_rows WHERE id = $1 AND status = 'working' AND lease_owner = $2`,
      [id, leaving.workerId],
    );
    return rows.length > 0 ? true : undefined;
  }, 'the call held by the leaving poller');
  // A second poller stands by: had the call been given back, it would take the row over.
  const staying = await fleet.poller(serversFile, { env });
  leaving.child.kill('SIGTERM');
  const final = await waitUntil(
    async () => {
      const rows = await fleet.db.query<HeldRow>(
        `SELECT * FROM tasks WHERE id = $1 AND completed_at IS NOT NULL`,
        [id],
      );
      return rows[0];
    },
    'the held call to end',
    20_000,
    100,
  );
  // Once seen in a full run on a slow host (failed, outcome_uncertain) and not reproduced alone
  // or beside busy loops: the pollers' last lines go with such a failure, to place it.
  if (final.status !== 'completed') {
    const last = (p: typeof leaving) => JSON.stringify(p.logs.slice(-40));
    process.stderr.write(`leaving poller: ${last(leaving)}\nstaying poller: ${last(staying)}\n`);
  }
  expect([final.status, final.error_code]).toEqual(['completed', null]);
  // It ran on the leaving poller to the end: one call upstream, never claimed by the other.
  expect((await demo.stats('held-drain')).by_tag['held-drain']?.submits).toBe(1);
  expect(attemptLines([staying]).filter((l) => l.taskId === id)).toEqual([]);
  expect((await awaitAttemptLines([leaving], id)).map((l) => l.outcome)).toEqual(['ok']);
  // The one SIGTERM above is the whole stop: a second signal would mean "exit now" (exit 1).
  expect(await waitForExit(leaving.child, 10_000)).toBe(true);
  expect(leaving.child.exitCode).toBe(0);
});

// Guards the drain's decision by what an attempt does, not by its claim's phase: a sync call
// whose first attempt failed "not sent" is held again from a poll-phase claim, and a draining
// poller must keep it as it keeps any held call (docs/leases.md, "Held calls at shutdown").
it('a draining poller keeps a held call that a poll-phase claim started', async () => {
  const port = await freePort();
  const first = await startDemoServer([], { port });
  const serversFile = writeServersFile({
    demo: syncEntry(`http://127.0.0.1:${port}`, 'held-again', false),
  });
  const env = { LEASE_MS: '12000' };
  const leaving = await fleet.poller(serversFile, { env: { ...env, DRAIN_TIMEOUT_MS: '200' } });
  // A second poller stands by, paused until the SIGTERM: had the call been given back, it
  // would take the row over. Started now, so its boot does not eat into the held call.
  const staying = await fleet.poller(serversFile, { env });
  staying.pause();
  await awaitUpstreamReady([leaving], 'demo');
  // The server goes away: the first attempt cannot connect, so its call is not sent.
  await first.kill();
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'held-again',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 6000, tag: 'held-again' },
    },
  ]);
  await awaitAttemptLines([leaving], id, (lines) =>
    lines.some((l) => l.phase === 'submit' && l.outcome === 'transient_error'),
  );
  // Back on the same port: the next attempt, a poll-phase claim, holds the call.
  const demo = await startDemoServer([], { port });
  await waitUntil(
    async () => ((await demo.stats('held-again')).by_tag['held-again']?.submits ? true : undefined),
    () =>
      `the call held again: ${JSON.stringify(leaving.logs.slice(-15).map((l) => [l.msg, l.phase, l.outcome, l.error ?? l.err ?? l.to]))}`,
    30_000,
  );
  const held = await heldRow(id);
  expect([held.status, held.lease_owner]).toEqual(['working', leaving.workerId]);
  leaving.child.kill('SIGTERM');
  staying.resume();
  const final = await waitUntil(
    async () => {
      const rows = await fleet.db.query<HeldRow>(
        `SELECT * FROM tasks WHERE id = $1 AND completed_at IS NOT NULL`,
        [id],
      );
      return rows[0];
    },
    'the held call to end',
    20_000,
    100,
  );
  expect([final.status, final.error_code]).toEqual(['completed', null]);
  // The call that a poll-phase claim started ran on the leaving poller to its end, sent once.
  const lines = await awaitAttemptLines([leaving], id, (l) => l.some((x) => x.outcome === 'ok'));
  const ok = lines.pop()!;
  expect([ok.phase, ok.outcome]).toEqual(['poll', 'ok']);
  expect(lines.map((l) => l.outcome)).toEqual(lines.map(() => 'transient_error'));
  expect((await demo.stats('held-again')).by_tag['held-again']?.submits).toBe(1);
  expect(attemptLines([staying]).filter((l) => l.taskId === id)).toEqual([]);
  expect(await waitForExit(leaving.child, 10_000)).toBe(true);
  expect(leaving.child.exitCode).toBe(0);
});
