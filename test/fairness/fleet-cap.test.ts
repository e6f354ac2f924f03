// Guards docs/leases.md, "Fleet-wide caps": calls in flight to a server stay within
// fleetMaxConcurrentCalls across all pollers together.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates, waitAllTerminal } from '../helpers/fleet-tasks';
import { demoServerEntry, writeServersFile } from '../helpers/processes';

const fleet = useFleet();
const FLEET_CAP = 3;

it('three pollers with 4 slots each never hold more than 3 calls to a server capped at 3', async () => {
  const demo = await fleet.demo();
  const serversFile = writeServersFile({
    demo: demoServerEntry(demo.url, 'demo', {
      sync: true,
      maxConcurrentCalls: 4,
      fleetMaxConcurrentCalls: FLEET_CAP,
    }),
  });
  // No fallback claim within the test: a call ending on one poller must itself lead to the next
  // claim of the capped server's rows (docs/leases.md, "Fleet-wide caps").
  await Promise.all(
    Array.from({ length: 3 }, () =>
      fleet.poller(serversFile, { env: { CLAIM_FALLBACK_INTERVAL_MS: '600000' } }),
    ),
  );
  // Held sync calls: each keeps its lease (renewed) for the whole call, so it counts throughout.
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 18 }, (_, i) => ({
      toolset: 'demo-sync',
      server: 'demo',
      contract: 'sync-call' as const,
      input: { duration_ms: 800, tag: `capped-${i}` },
    })),
  );
  await waitAllTerminal(fleet.db, ids, 'all capped tasks terminal', 60_000);
  const states = [...(await taskStates(fleet.db, ids)).values()];
  expect(states.filter((s) => s.status !== 'completed')).toEqual([]);
  const held = (await demo.stats()).held_calls;
  // The upstream's own count: never above the cap, and the cap was reached (work went on).
  expect(held.max).toBe(FLEET_CAP);
  expect(held.in_flight).toBe(0);
});
