// Guards invariant 7: a hung upstream fills only its own slots; another server's tasks keep their schedule.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
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
const POLL_MS = Number(FAST_POLLER_ENV.POLL_INTERVAL_MS);

it('healthy tasks are polled on time while 40 hung polls wait on their own server', async () => {
  const [hung, healthy] = await Promise.all([startDemoServer(), startDemoServer()]);
  const serversFile = writeServersFile({
    hung: demoServerEntry(hung.url, 'hung-ordinary', { maxConcurrentCalls: 3 }),
    healthy: demoServerEntry(healthy.url, 'healthy-ordinary', { maxConcurrentCalls: 5 }),
  });
  // 8 slots: without per-server limits the 40 hung tasks would hold all of them for 1.9 s a poll.
  const poller = await fleet.poller(serversFile);
  await insertFleetTasks(
    fleet.db,
    Array.from({ length: 40 }, (_, i) => ({
      toolset: 'hung-ordinary',
      server: 'hung',
      input: { duration_ms: 600_000, fault: 'hang_status', tag: `hung-${i}` },
    })),
  );
  // Let the hung polls fill their server's slots before the healthy work arrives.
  await waitUntil(
    async () =>
      metricValue(await poller.metrics(), 'mcp_tasks_inflight', { server: 'hung' }) === 3
        ? true
        : undefined,
    'hung slots full',
  );
  const healthyIds = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 5 }, (_, i) => ({
      toolset: 'healthy-ordinary',
      server: 'healthy',
      input: { duration_ms: 4000, tag: `ok-${i}` },
    })),
  );
  const inflight: number[] = [];
  await waitUntil(
    async () => {
      inflight.push(metricValue(await poller.metrics(), 'mcp_tasks_inflight', { server: 'hung' }));
      const states = [...(await taskStates(fleet.db, healthyIds)).values()];
      return states.every((s) => s.status === 'completed') ? true : undefined;
    },
    'healthy tasks completed',
    15_000,
    100,
  );
  expect(Math.max(...inflight)).toBeLessThanOrEqual(3);
  // Between two polls of one healthy task: the jittered interval plus one attempt, never a
  // hung poll's 1.9 s deadline.
  const lines = attemptLines([poller]).filter((l) => healthyIds.includes(l.taskId));
  for (const id of healthyIds) {
    const polls = lines.filter((l) => l.taskId === id).sort((a, b) => a.start - b.start);
    expect(polls.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < polls.length; i++) {
      expect(polls[i].start - polls[i - 1].end).toBeLessThan(POLL_MS * 1.1 + 600);
    }
  }
});
