// Guards ordinary toolsets on a stdio server under several pollers: each task stays with the poller whose child holds its job, so none is lost.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { attemptLines } from '../helpers/poller-logs';
import {
  DEMO_ORDINARY_TOOLS,
  demoStdioEntry,
  stdioChildrenOf,
  useStdioChildren,
  writeServersFile,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const TASKS = 16;

const fleet = useFleet();
/** Stdio demo children of the pollers, killed by PID after each test if still alive. */
const stdioChildren = useStdioChildren();

it('two pollers, one stdio ordinary toolset: every task completes, polled only by its submitter', async () => {
  const serversFile = writeServersFile({
    local: demoStdioEntry([{ name: 'stdio-ordinary', ...DEMO_ORDINARY_TOOLS }]),
  });
  const pollers = await Promise.all([fleet.poller(serversFile), fleet.poller(serversFile)]);
  for (const poller of pollers) {
    for (const pid of stdioChildrenOf(poller.child.pid!)) stdioChildren.add(pid);
  }
  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: TASKS }, (_, i) => ({
      toolset: 'stdio-ordinary',
      server: 'local',
      input: { duration_ms: 1500, poll_after_seconds: 0.2, tag: `stdio-${i}` },
    })),
  );
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
  expect(outcomes).toEqual(Array(TASKS).fill('completed/-'));
  // Both pollers took a share, and every attempt after a task's submit ran on its submitter. A
  // submit that failed before reaching the child (a slow spawn timing out under load) leaves no
  // job behind, so another worker may take the task before that.
  const lines = attemptLines(pollers).filter((l) => ids.includes(l.taskId));
  const submitter = new Map<string, string>();
  for (const line of lines) {
    if (line.phase === 'submit' && line.outcome === 'ok') submitter.set(line.taskId, line.worker);
  }
  expect(submitter.size).toBe(TASKS);
  const strayAttempts = lines.filter(
    (l) => !(l.phase === 'submit' && l.outcome !== 'ok') && l.worker !== submitter.get(l.taskId),
  );
  expect(strayAttempts).toEqual([]);
  expect(new Set(submitter.values()).size).toBe(2);
  expect(lines.filter((l) => l.phase === 'poll').length).toBeGreaterThanOrEqual(TASKS);
});
