// Guards invariant 3's timing (defect 11 of issue 13): a survivor claims a killed poller's rows at their lease expiry, woken by the earliest due time it knows, not by its fallback timer.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { demoServerEntry, FAST_POLLER_ENV, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const LEASE_MS = Number(FAST_POLLER_ENV.LEASE_MS);
// Far beyond the test's own wait: a survivor that wakes only on its fallback timer (or a
// NOTIFY, and a SIGKILL sends none) would not rescue anything within this test.
const SURVIVOR_FALLBACK_MS = 300_000;
// The rescue's due lag (claim time minus the expired lease's due time, both by the database
// clock) must be far below the fallback; this bound leaves a loaded machine's timer slack.
const DUE_LAG_BOUND_MS = 5000;

const fleet = useFleet();

it('a survivor rescues held rows at their lease expiry, though its fallback timer is minutes away', async () => {
  const demo = await fleet.demo();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo', { sync: true }) });
  // The victim holds long sync calls: their rows stay leased (renewed every lease/3) and are
  // due only at the lease expiry, so nothing but that expiry makes them claimable.
  const victim = await fleet.poller(serversFile);
  const ids = await insertFleetTasks(
    fleet.db,
    [1, 2, 3].map((n) => ({
      toolset: 'demo-sync',
      server: 'demo',
      contract: 'sync-call',
      input: { duration_ms: 600_000, tag: `held-${n}` },
    })),
  );
  await waitUntil(async () => {
    const states = [...(await taskStates(fleet.db, ids)).values()];
    return states.every((s) => s.status === 'working' && s.lease_owner === victim.workerId)
      ? true
      : undefined;
  }, 'the victim holding every call');
  const survivor = await fleet.poller(serversFile, {
    env: { CLAIM_FALLBACK_INTERVAL_MS: String(SURVIVOR_FALLBACK_MS) },
  });
  await victim.kill();
  const rescues = await waitUntil(
    () => {
      const lines = survivor.logs.filter(
        (l) => l.msg === 'attempt' && l.rescued === true && ids.includes(String(l.task_id)),
      );
      return lines.length === ids.length ? lines : undefined;
    },
    'the survivor rescuing every held row',
    LEASE_MS + 30_000,
    50,
  );
  for (const line of rescues) {
    expect(typeof line.due_lag_ms).toBe('number');
    expect(line.due_lag_ms).toBeLessThan(DUE_LAG_BOUND_MS);
  }
  // Each rescued row ended by the crash rules (a held call without retryOnCrash).
  const states = await taskStates(fleet.db, ids);
  for (const id of ids) {
    expect([states.get(id)!.status, states.get(id)!.error_code]).toEqual([
      'failed',
      'outcome_uncertain',
    ]);
  }
});
