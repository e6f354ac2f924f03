// Guards ordinary toolsets on a stdio server under several pollers: each task stays with the poller whose child holds its job, so none is lost.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { attemptLines, awaitUpstreamReady } from '../helpers/poller-logs';
import {
  DEMO_ORDINARY_TOOLS,
  demoStdioEntry,
  stdioChildrenOf,
  useStdioChildren,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

/** Tasks per phase: each phase's tasks are submitted by one poller while the other is paused. */
const PER_PHASE = 8;

const fleet = useFleet();
/** Stdio demo children of the pollers, killed by PID after each test if still alive. */
const stdioChildren = useStdioChildren();

/** Inserts one phase's tasks and waits until every one of them holds a remote handle. */
async function submitPhase(phase: string): Promise<string[]> {
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: PER_PHASE }, (_, i) => ({
      toolset: 'stdio-ordinary',
      server: 'local',
      input: { duration_ms: 2500, poll_after_seconds: 0.2, tag: `stdio-${phase}-${i}` },
    })),
  );
  await waitUntil(
    async () => {
      const found = await taskStates(fleet.db, ids);
      return [...found.values()].every((t) => t.remote_task_id !== null) || undefined;
    },
    `phase ${phase} submitted`,
    30_000,
    50,
  );
  return ids;
}

it('two pollers, one stdio ordinary toolset: every task completes, polled only by its submitter', async () => {
  const serversFile = writeServersFile({
    local: demoStdioEntry([{ name: 'stdio-ordinary', ...DEMO_ORDINARY_TOOLS }]),
  });
  // A dead-after window (3 heartbeats) far longer than any pause below: a paused poller stays
  // alive to the claim, so its pinned rows must stay with it, not be ended as lost.
  const env = { HEARTBEAT_INTERVAL_MS: '5000', LEASE_MS: '20000' };
  const pollers = await Promise.all([
    fleet.poller(serversFile, { env }),
    fleet.poller(serversFile, { env }),
  ]);
  const [first, second] = pollers;
  // Both sessions first: a row claimed by a poller still connecting waits out the error backoff.
  await awaitUpstreamReady(pollers, 'local');
  for (const poller of pollers) {
    for (const pid of stdioChildrenOf(poller.child.pid!)) stdioChildren.add(pid);
  }
  // Which poller claims a due row is a race; pausing the other one while a phase is submitted
  // decides it, so both hold jobs. While the second phase is submitted, the first phase's rows
  // are due every 0.2 s with only the second poller running: the claim must pass over them.
  let ids: string[];
  second.pause();
  try {
    const firstPhase = await submitPhase('a');
    second.resume();
    first.pause();
    ids = [...firstPhase, ...(await submitPhase('b'))];
  } finally {
    second.resume();
    first.resume();
  }
  const states = await waitUntil(
    async () => {
      const found = await taskStates(fleet.db, ids);
      return [...found.values()].every((t) => t.completed_at !== null) ? found : undefined;
    },
    'every task to end',
    60_000,
    100,
  );
  const outcomes = [...states.values()].map((t) => `${t.status}/${t.error_code ?? '-'}`);
  expect(outcomes).toEqual(Array(2 * PER_PHASE).fill('completed/-'));
  // Every attempt after a task's submit ran on its submitter. A submit that failed before
  // reaching the child (a slow spawn timing out under load) leaves no job behind, so another
  // worker may take the task before that.
  const lines = attemptLines(pollers).filter((l) => ids.includes(l.taskId));
  const submitter = new Map<string, string>();
  for (const line of lines) {
    if (line.phase === 'submit' && line.outcome === 'ok') submitter.set(line.taskId, line.worker);
  }
  expect(ids.map((id) => submitter.get(id))).toEqual([
    ...Array(PER_PHASE).fill(first.workerId),
    ...Array(PER_PHASE).fill(second.workerId),
  ]);
  const strayAttempts = lines.filter(
    (l) => !(l.phase === 'submit' && l.outcome !== 'ok') && l.worker !== submitter.get(l.taskId),
  );
  expect(strayAttempts).toEqual([]);
  // The first phase was polled while the second poller ran alone, and after.
  expect(lines.filter((l) => l.phase === 'poll').length).toBeGreaterThanOrEqual(2 * PER_PHASE);
});
