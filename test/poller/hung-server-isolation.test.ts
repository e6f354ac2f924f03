// Guards invariant 7: a hung upstream fills only its own slots; another server's tasks keep their schedule.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { attemptLines } from '../helpers/poller-logs';
import {
  demoServerEntry,
  metricValue,
  startDemoServer,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();
const HUNG_CALL_MS = 45_000;

it('healthy tasks are polled on time while 40 hung polls wait on their own server', async () => {
  const [hung, healthy] = await Promise.all([startDemoServer(), startDemoServer()]);
  const serversFile = writeServersFile({
    // A 45 s call deadline: a healthy poll that waited behind a hung one would wait that long.
    hung: {
      ...demoServerEntry(hung.url, 'hung-ordinary', { maxConcurrentCalls: 3 }),
      callTimeoutMs: HUNG_CALL_MS,
    },
    healthy: demoServerEntry(healthy.url, 'healthy-ordinary', { maxConcurrentCalls: 5 }),
  });
  // 8 slots: without per-server limits the 40 hung tasks would hold all of them for 1.9 s a poll.
  const poller = await fleet.poller(serversFile, { env: { LEASE_MS: '60000' } });
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
    30_000,
    100,
  );
  expect(Math.max(...inflight)).toBeLessThanOrEqual(3);
  // They completed while every hung poll was still stuck: no hung poll has ended yet.
  const all = attemptLines([poller]);
  expect(all.filter((l) => !healthyIds.includes(l.taskId) && l.phase === 'poll')).toEqual([]);
  // Between two polls of one healthy task: the poll interval plus one attempt, never a hung
  // poll's 45 s deadline (10 s is headroom for a loaded machine, far below it).
  const lines = all.filter((l) => healthyIds.includes(l.taskId));
  for (const id of healthyIds) {
    const polls = lines.filter((l) => l.taskId === id).sort((a, b) => a.start - b.start);
    expect(polls.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < polls.length; i++) {
      expect(polls[i].start - polls[i - 1].end).toBeLessThan(10_000);
    }
  }
});
