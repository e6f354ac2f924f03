// Guards against a pushed 2025-11-25 task that its server expires being found lost only at the
// slow safety poll (docs/connections.md, "Push"): a 2025-11-25 `ttl` counts from the task's
// creation, as the 2026-07-28 `ttlMs` does, and a server drops an expired task without a
// notification, so the poller polls a task its subscription covers no later than
// `createdAt + ttl`. Here the safety poll is 20 normal intervals (at least 5.4 s); the ttl is
// 1.5 s.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { waitUntil } from '../helpers/wait';

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
          { name: 'old-task', contract: 'mcp-tasks', tool: 'demo_task_required', ttlMs: 1500 },
        ],
      },
    },
    // The mcp-tasks submit's deadlines must fit in the lease (docs/leases.md, "Attempt deadlines").
    { env: { LEASE_MS: '20000' } },
  );
  await waitUntil(async () => {
    const rows = await fleet.db.query(
      `SELECT 1 FROM toolsets WHERE name = 'old-task' AND available`,
    );
    return rows.length > 0 ? true : undefined;
  }, 'the toolset available');
  // A session covers its tasks once its stream has delivered a notification: a short task's
  // end, pushed, makes the poller's task session a covering one.
  const [first] = await insertFleetTasks(fleet.db, [
    { toolset: 'old-task', server: 'old', contract: 'mcp-tasks', input: { duration_ms: 300 } },
  ]);
  await waitUntil(
    async () =>
      (await taskStates(fleet.db, [first])).get(first)!.status === 'completed' ? true : undefined,
    'the first task to complete',
  );
  const [id] = await insertFleetTasks(fleet.db, [
    { toolset: 'old-task', server: 'old', contract: 'mcp-tasks', input: { duration_ms: 60_000 } },
  ]);
  const ended = await waitUntil(
    async () => {
      const task = (await taskStates(fleet.db, [id])).get(id)!;
      return task.status === 'failed' ? task : undefined;
    },
    'the expired task to end',
    4_500,
  );
  expect(ended.error_code).toBe('upstream_task_lost');
});
