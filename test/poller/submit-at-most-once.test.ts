// Guards invariants 4-5: with pollers killed mid-run, no task is submitted twice or changes once terminal.
import { useFleet } from '../helpers/fleet';
import {
  countTerminal,
  insertFleetTasks,
  submitViolations,
  taskStates,
} from '../helpers/fleet-tasks';
import {
  demoServerEntry,
  PollerProcess,
  startDemoServer,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

it('three pollers, 240 tasks, four SIGKILLs: at most one submit each, crashes end outcome_uncertain', async () => {
  const demo = await startDemoServer();
  // The retrying toolset binds the same tools, so it sits on a second entry for the same server.
  const serversFile = writeServersFile({
    demo: demoServerEntry(demo.url, 'demo-ordinary'),
    'demo-again': demoServerEntry(demo.url, 'demo-retry', { retryOnCrash: true }),
  });
  const start = () => fleet.poller(serversFile);
  const pollers: PollerProcess[] = await Promise.all([start(), start(), start()]);
  const seeds = Array.from({ length: 240 }, (_, i) => ({
    toolset: i % 8 === 7 ? 'demo-retry' : 'demo-ordinary',
    server: i % 8 === 7 ? 'demo-again' : 'demo',
    input: { duration_ms: 200 + (i % 7) * 150, tag: `once-${i}` },
  }));
  const ids: string[] = [];

  // Every terminal state seen is recorded; it must never change afterwards (invariant 4).
  const firstTerminal = new Map<string, string>();
  const watch = async (): Promise<void> => {
    for (const s of (await taskStates(fleet.db, ids)).values()) {
      if (!['completed', 'failed', 'cancelled'].includes(s.status)) continue;
      const seen = `${s.status}/${s.error_code}/${String(s.completed_at?.getTime())}`;
      expect(firstTerminal.get(s.id) ?? seen).toBe(seen);
      firstTerminal.set(s.id, seen);
    }
  };
  for (let kill = 0; kill < 4; kill++) {
    // Freeze the upstream, then add a wave of 60 submits: the pollers' submits are then on the
    // wire and unanswered, so a kill is sure to land mid-submit instead of racing a fast answer.
    demo.child.kill('SIGSTOP');
    ids.push(...(await insertFleetTasks(fleet.db, seeds.slice(kill * 60, kill * 60 + 60))));
    const victim = await waitUntil(async () => {
      await watch();
      const rows = await fleet.db.query<{ lease_owner: string }>(
        `SELECT lease_owner FROM task_rows WHERE status = 'queued' AND submit_started_at IS NOT NULL
           AND lease_owner IS NOT NULL AND lease_expires_at > now() LIMIT 1`,
      );
      return pollers.find((p) => p.workerId === rows[0]?.lease_owner && p.child.exitCode === null);
    }, 'a poller in the middle of a submit');
    await victim.kill();
    demo.child.kill('SIGCONT');
    pollers.splice(pollers.indexOf(victim), 1, await start());
  }
  await waitUntil(
    async () => {
      await watch();
      return (await countTerminal(fleet.db, ids)) === ids.length ? true : undefined;
    },
    'all tasks terminal',
    60_000,
    200,
  );
  await watch();
  const retryIds = ids.filter((_, i) => seeds[i].toolset === 'demo-retry');
  const plainIds = ids.filter((_, i) => seeds[i].toolset === 'demo-ordinary');
  const stats = await demo.stats();
  expect(await submitViolations(fleet.db, plainIds, stats.by_tag)).toEqual([]);
  // retryOnCrash tasks may be submitted again after a crash, so they never end outcome_uncertain.
  const retried = await taskStates(fleet.db, retryIds);
  for (const s of retried.values()) expect(s.error_code).not.toBe('outcome_uncertain');
  // The kills did interrupt submits: at least one task shows a crash mid-submit.
  const crashed = [...(await taskStates(fleet.db, ids)).values()].filter(
    (s) => s.claim_count > 1 && s.submit_attempts >= 1,
  );
  expect(crashed.length).toBeGreaterThan(0);
});
