// Guards invariant 2: a poller paused past its lease (SIGSTOP, then SIGCONT) never lands a write.
import { useFleet } from '../helpers/fleet';
import {
  insertFleetTasks,
  taskStates,
  waitAllTerminal,
  waitNoPollerStatement,
} from '../helpers/fleet-tasks';
import { attemptLines } from '../helpers/poller-logs';
import {
  demoServerEntry,
  FAST_POLLER_ENV,
  metricValue,
  startDemoServer,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

it('the paused poller finds every claim it held taken over, and its late writes discarded', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const paused = await fleet.poller(serversFile);
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 40 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 6000, tag: `pause-${i}` },
    })),
  );
  // Let it submit everything, then catch it holding claims (polls in flight) and freeze it.
  await waitUntil(
    async () => {
      const states = [...(await taskStates(fleet.db, ids)).values()];
      return states.every((s) => s.status === 'working') ? true : undefined;
    },
    'all submitted',
    20_000,
  );
  // Freeze it while it holds claims. A write sent just before the freeze may still be processed
  // by Postgres after it, so wait until none of its statements runs (it is the only poller yet):
  // then the set of claims it holds can no longer change. If that set came out empty (every held
  // claim was being written back), thaw it and try again.
  const frozen = await waitUntil(async () => {
    const held = await fleet.db.query<{ id: string }>(
      `SELECT id FROM task_rows WHERE lease_owner = $1 AND lease_expires_at > now()`,
      [paused.workerId],
    );
    if (held.length === 0) return undefined;
    paused.pause();
    await waitNoPollerStatement(fleet.db);
    const rows = await fleet.db.query<{ id: string }>(
      `SELECT id FROM task_rows WHERE lease_owner = $1 AND lease_expires_at > now()`,
      [paused.workerId],
    );
    if (rows.length > 0) return rows;
    paused.resume();
    return undefined;
  }, 'the poller frozen while holding claims');
  expect(frozen.length).toBeGreaterThan(0);

  const rescuer = await fleet.poller(serversFile);
  await waitAllTerminal(fleet.db, ids, 'the rescuer finished every task', 30_000);
  // The claims the rescuer took over from an expired lease. A write the paused poller sent just
  // before the freeze can reach Postgres after the check above (its bytes were still on their
  // way: the backend shows no statement until it reads them) and land while its lease is
  // still live; that claim ended rightly ("ok" once thawed), and the rescuer claimed the row
  // again as any due row, not as a rescue.
  const rescuedIds = new Set(
    attemptLines([rescuer])
      .filter((l) => l.rescued)
      .map((l) => l.taskId),
  );
  const frozenIds = frozen.map((r) => r.id).filter((id) => rescuedIds.has(id));
  expect(frozenIds.length).toBeGreaterThan(0);
  const before = await taskStates(fleet.db, ids);
  const linesBefore = attemptLines([paused]).length;

  paused.resume();
  // The resumed poller wakes with calls whose leases are long gone: each must end lease_lost.
  await waitUntil(
    async () => {
      const late = attemptLines([paused]).slice(linesBefore);
      const settled = frozenIds.filter((id) => late.some((l) => l.taskId === id));
      return settled.length === frozenIds.length ? late : undefined;
    },
    'the resumed poller to settle its stale claims',
    Number(FAST_POLLER_ENV.LEASE_MS) * 3,
  );
  const late = attemptLines([paused])
    .slice(linesBefore)
    .filter((l) => frozenIds.includes(l.taskId));
  expect(late.map((l) => l.outcome)).toEqual(late.map(() => 'lease_lost'));
  expect(metricValue(await paused.metrics(), 'mcp_tasks_lease_lost_total')).toBeGreaterThanOrEqual(
    frozenIds.length,
  );
  // Nothing it did after the pause changed a row.
  const after = await taskStates(fleet.db, ids);
  for (const id of ids) expect(after.get(id)).toEqual(before.get(id));
  expect(rescuer.workerId).not.toBe(paused.workerId);
});
