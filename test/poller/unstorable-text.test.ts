// Guards against text Postgres cannot store (a lone UTF-16 surrogate in an upstream's answer)
// stalling its task, failing the group-commit batch of other users' healthy tasks, or silently
// altering a remote task ID: a real poller against a real upstream whose raw JSON carries `\ud83d`.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates, waitAllTerminal } from '../helpers/fleet-tasks';
import {
  LONE_SURROGATE,
  startCutTextUpstream,
  type CutTextUpstream,
} from '../helpers/cut-text-upstream';
import { attemptLines, awaitAttemptLines } from '../helpers/poller-logs';
import { writeServersFile } from '../helpers/processes';

const fleet = useFleet({ perTest: true });
let upstream: CutTextUpstream | undefined;

afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

it('healthy tasks beside lone surrogates complete untouched; the bad ones end at once', async () => {
  upstream = await startCutTextUpstream();
  const serversFile = writeServersFile({
    cut: {
      url: upstream.url,
      // Generous: on a loaded machine a submit cut by its timeout would end outcome_uncertain,
      // which is not what this test is about (the 10 s lease below leaves room for it).
      connectTimeoutMs: 2000,
      callTimeoutMs: 5000,
      maxConcurrentCalls: 40,
      taskToolsets: [
        {
          name: 'cut',
          contract: 'ordinary',
          submitTool: 'cut_submit',
          statusTool: 'cut_status',
          cancelTool: 'cut_cancel',
        },
      ],
    },
  });
  // A window long enough that the first polls of all 32 tasks (due together, ±10 % jitter)
  // share their statements: one unstorable row in a batch used to fail it for every row.
  const poller = await fleet.poller(serversFile, {
    // A 10 s lease: on a loaded machine no attempt deadline cuts a call, so every failed
    // attempt below is the batch's doing.
    env: { WORKER_SLOTS: '40', WRITE_BATCH_WINDOW_MS: '100', LEASE_MS: '10000' },
  });
  const seed = (kind: string, userId: string) => ({
    toolset: 'cut',
    server: 'cut',
    userId,
    input: { kind },
  });
  // One insert, so that all 32 are claimed, submitted and polled together.
  const ids = await insertFleetTasks(fleet.db, [
    ...Array.from({ length: 15 }, () => seed('healthy', 'user-healthy')),
    seed('cut_result', 'user-cut'),
    seed('cut_id', 'user-cut'),
    ...Array.from({ length: 15 }, () => seed('healthy', 'user-healthy')),
  ]);
  const [cutResult, cutId] = ids.slice(15, 17);
  const healthy = ids.filter((id) => id !== cutResult && id !== cutId);
  await waitAllTerminal(fleet.db, ids, 'every task to end', 20_000);
  expect(upstream.cutAnswers).toBeGreaterThan(0);
  // Within its normal poll time: the bad task ended at its first poll, like the healthy ones,
  // without an error on the way. An attempt's line follows its write: wait for the ending poll
  // of every task that was polled (not the one refused at submit) to be logged.
  for (const id of [...healthy, cutResult])
    await awaitAttemptLines([poller], id, (lines) => lines.some((l) => l.phase !== 'submit'));
  const bad = attemptLines([poller]).filter((line) => line.taskId === cutResult);
  expect(bad.map((line) => [line.phase, line.outcome])).toEqual([
    ['submit', 'ok'],
    ['poll', 'ok'],
  ]);

  const states = await taskStates(fleet.db, ids);
  expect(
    healthy
      .map((id) => states.get(id)!)
      .filter((s) => s.status !== 'completed' || s.last_error !== null || s.consecutive_errors)
      .map((s) => [s.status, s.error_code, s.error_message, s.last_error]),
  ).toEqual([]);
  // No attempt of a healthy task failed on the way (an error is cleared by the next success).
  const failedAttempts = attemptLines([poller]).filter(
    (line) => healthy.includes(line.taskId) && line.outcome !== 'ok',
  );
  expect(failedAttempts).toEqual([]);

  // The cut text is stored with U+FFFD in its place, in the result and the progress.
  const [stored] = await fleet.db.query<{ status: string; result: unknown; progress: unknown }>(
    `SELECT status, result, progress FROM tasks WHERE id = $1`,
    [cutResult],
  );
  expect(stored).toEqual({
    status: 'completed',
    result: { text: 'cut emoji \uFFFD' },
    progress: { current: 1, total: 1, message: 'cut emoji \uFFFD' },
  });

  // A remote ID that cannot be stored exactly is a contract break, and the job is cancelled
  // under the ID the upstream gave, not an altered one.
  const broken = states.get(cutId)!;
  expect([broken.status, broken.error_code, broken.remote_task_id]).toEqual([
    'failed',
    'protocol_error',
    null,
  ]);
  expect(broken.error_message).toMatch(/task_id.*surrogate/);
  expect(upstream.cancelled).toEqual([expect.stringMatching(new RegExp(`-${LONE_SURROGATE}$`))]);

  // The catalog entry, whose description and schema carried a cut too, is published.
  const [toolset] = await fleet.db.query<{ description: string; input_schema: unknown }>(
    `SELECT description, input_schema FROM toolsets WHERE name = 'cut'`,
  );
  expect(toolset.description).toMatch(/^Starts a job \uFFFD/);
  expect(toolset.input_schema).toEqual({
    type: 'object',
    properties: { kind: { type: 'string', description: 'what to cut \uFFFD' } },
  });
});
