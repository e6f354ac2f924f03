// Guards against a pushed 2025-11-25 task that its server expires being found lost only at the
// slow safety poll (docs/connections.md, "Push"): a 2025-11-25 `ttl` counts from the task's
// creation, as the 2026-07-28 `ttlMs` does, and a server drops an expired task without a
// notification, so the poller polls a task its subscription covers no later than
// `createdAt + ttl`. Here the safety poll is 20 normal intervals (at least 5.4 s); the ttl is
// 1.5 s.
import { useFleet } from '../helpers/fleet';
import {
  dueInSeconds,
  insertFleetTasks,
  taskStates,
  waitToolsetsAvailable,
} from '../helpers/fleet-tasks';
import { waitForStatus, waitUntil } from '../helpers/wait';

const fleet = useFleet();

it('a pushed 2025-11-25 task its server expires ends upstream_task_lost at its ttl', async () => {
  const demo = await fleet.demo(['--only-2025']);
  await fleet.poller(
    {
      old: {
        url: `${demo.url}/mcp`,
        connectTimeoutMs: 2000,
        callTimeoutMs: 3000,
        taskToolsets: [
          { name: 'old-task', contract: 'mcp-tasks', tool: 'demo_task_optional' },
          { name: 'old-ttl', contract: 'mcp-tasks', tool: 'demo_task_required', ttlMs: 1500 },
        ],
      },
    },
    // The mcp-tasks submit's deadlines must fit in the lease (docs/leases.md, "Attempt deadlines").
    { env: { LEASE_MS: '20000' } },
  );
  await waitToolsetsAvailable(fleet.db, 2);
  const state = (id: string) => async () => (await taskStates(fleet.db, [id])).get(id)!;

  // A session covers its tasks once its stream has delivered a notification. A task whose
  // question, pushed, comes after 2 s proves it: its next poll is then the safety poll, not
  // one normal interval away. Without that proof a task polled at the normal interval would
  // find the expired task as fast as the backstop, and this test could not fail. Not sooner: the
  // server drops a notification sent before the session's stream is open, and on a loaded
  // machine (a CI run's Node 24 pass) the stream of the task session the submit opened took
  // longer than 0.5 s, so the one question was never pushed and the session never covered.
  const [covering] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'old-task',
      server: 'old',
      contract: 'mcp-tasks',
      input: {
        duration_ms: 120_000,
        input_required_after_ms: 2000,
        input_required_for_ms: 60_000,
      },
    },
  ]);
  await waitForStatus(state(covering), 'input_required', { timeoutMs: 20_000 });
  await waitUntil(async () => {
    const due = await dueInSeconds(fleet.db, covering);
    return due !== null && due > 3 ? true : undefined;
  }, 'the session covering its tasks (the safety poll)');

  const [id] = await insertFleetTasks(fleet.db, [
    { toolset: 'old-ttl', server: 'old', contract: 'mcp-tasks', input: { duration_ms: 60_000 } },
  ]);
  const ended = await waitForStatus(state(id), ['completed', 'failed', 'cancelled'], {
    timeoutMs: 4_500,
  });
  expect(ended.status).toBe('failed');
  expect(ended.error_code).toBe('upstream_task_lost');
});
