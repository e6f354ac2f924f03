// Guards invariant 1: no row ever has two live leases, and concurrent claimers never share a row.
import { Database, TaskLeaseRepository } from '@app/persistence';
import { Phase } from '@app/common';
import { testPool } from '../helpers/db';
import { useFleet } from '../helpers/fleet';
import { countTerminal, insertFleetTasks, submitViolations } from '../helpers/fleet-tasks';
import { insertTasks } from '../helpers/tasks';
import { attemptLines, overlappingAttempts } from '../helpers/poller-logs';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

it('twelve concurrent claimers on separate connections never get the same row', async () => {
  await insertTasks(fleet.db, 2000, { toolset: 'concurrent', server: 'nowhere' });
  const pool = testPool(fleet.url, 12);
  try {
    const leases = new TaskLeaseRepository(new Database(pool));
    const seen = new Map<string, number>();
    await Promise.all(
      Array.from({ length: 12 }, async (_, worker) => {
        for (;;) {
          const rows = await leases.claim({
            workerId: `w${worker}`,
            limit: 7,
            phases: [Phase.Submit],
            leaseMs: 60_000,
            deadWorkerAfterMs: 60_000,
            excludeServers: [],
          });
          if (rows.length === 0) return;
          for (const row of rows) seen.set(row.id, (seen.get(row.id) ?? 0) + 1);
        }
      }),
    );
    expect(seen.size).toBe(2000);
    expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
  } finally {
    await pool.end();
  }
});

it('three pollers work 150 tasks with no two overlapping attempts on one task', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const pollers = await Promise.all([1, 2, 3].map(() => fleet.poller(serversFile)));
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 150 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 300 + (i % 5) * 100, tag: `dc-${i}` },
    })),
  );
  await waitUntil(
    async () => ((await countTerminal(fleet.db, ids)) === ids.length ? true : undefined),
    'all 150 tasks terminal',
    60_000,
    200,
  );
  const lines = attemptLines(pollers).filter((l) => ids.includes(l.taskId));
  // Every poller took part, so the claims really were concurrent.
  for (const poller of pollers) expect(lines.some((l) => l.worker === poller.workerId)).toBe(true);
  expect(overlappingAttempts(lines)).toEqual([]);
  // A submit that timed out on a loaded machine honestly ends outcome_uncertain; what must
  // never happen is a second submit or a completed task without exactly one.
  const stats = await demo.stats();
  expect(await submitViolations(fleet.db, ids, stats.by_tag)).toEqual([]);
  const completed = await fleet.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM tasks WHERE id = ANY($1) AND status = 'completed'`,
    [ids],
  );
  expect(Number(completed[0].n)).toBeGreaterThan(125);
});
