// Guards against a poller that starts but never moves tasks through submit, poll and completion.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates, waitAllTerminal } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';

const fleet = useFleet();

it('one poller takes ordinary tasks from queued to completed', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const poller = await fleet.poller(serversFile);
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 20 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 200, tag: `smoke-${i}` },
    })),
  );
  await waitAllTerminal(fleet.db, ids, 'all tasks terminal', 20_000, 50);
  const states = await taskStates(fleet.db, ids);
  expect([...states.values()].map((s) => s.status)).toEqual(ids.map(() => 'completed'));
  expect(poller.logs.some((l) => l.msg === 'attempt' && l.task_id === ids[0])).toBe(true);
});
