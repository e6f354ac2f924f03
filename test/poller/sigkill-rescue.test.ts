// Guards invariant 3: a SIGKILLed poller's tasks are attempted again within lease + poll interval.
import { useFleet } from '../helpers/fleet';
import { countTerminal, insertFleetTasks, submitViolations } from '../helpers/fleet-tasks';
import {
  demoServerEntry,
  FAST_POLLER_ENV,
  startDemoServer,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();
const LEASE_MS = Number(FAST_POLLER_ENV.LEASE_MS);
const POLL_MS = Number(FAST_POLLER_ENV.POLL_INTERVAL_MS);
// Process scheduling and timer slack on a loaded CI box; far below one more lease.
const SLACK_MS = 700;

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
  const held = await waitUntil(async () => {
    const rows = await fleet.db.query<{ id: string; claim_count: number }>(
      `SELECT id, claim_count FROM tasks WHERE lease_owner = $1 AND lease_expires_at > now()`,
      [victim.workerId],
    );
    if (rows.length < 3) return undefined;
    await victim.kill();
    return rows;
  }, 'the victim holding claims');
  const killedAt = Date.now();
  // Rows it held at the kill (re-read: a write sent just before the kill may have landed).
  const orphans = await fleet.db.query<{ id: string; claim_count: number }>(
    `SELECT id, claim_count FROM tasks WHERE lease_owner = $1 AND next_attempt_at IS NOT NULL`,
    [victim.workerId],
  );
  expect(held.length).toBeGreaterThan(0);
  expect(orphans.length).toBeGreaterThan(0);
  const pending = new Map(orphans.map((r) => [r.id, r.claim_count]));
  const reclaimedAt = new Map<string, number>();
  await waitUntil(
    async () => {
      const rows = await fleet.db.query<{ id: string; claim_count: number; done: boolean }>(
        `SELECT id, claim_count, next_attempt_at IS NULL AS done FROM tasks WHERE id = ANY($1)`,
        [[...pending.keys()]],
      );
      for (const row of rows) {
        if (row.claim_count > pending.get(row.id)! || row.done) {
          if (!reclaimedAt.has(row.id)) reclaimedAt.set(row.id, Date.now());
        }
      }
      return reclaimedAt.size === pending.size ? true : undefined;
    },
    'every orphan claimed again',
    LEASE_MS + POLL_MS + 5000,
    20,
  );
  for (const at of reclaimedAt.values()) {
    expect(at - killedAt).toBeLessThanOrEqual(LEASE_MS + POLL_MS + SLACK_MS);
  }
  await waitUntil(
    async () => ((await countTerminal(fleet.db, ids)) === ids.length ? true : undefined),
    'all tasks terminal',
    30_000,
    100,
  );
  expect(await submitViolations(fleet.db, ids, (await demo.stats()).by_tag)).toEqual([]);
  expect(survivor.child.exitCode).toBeNull();
});
