// Guards against an upstream's U+0000 (NUL) making a task unstorable: a real poller stores it replaced by U+FFFD and the task ends, not loops.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const REPLACED = '\uFFFD';

const fleet = useFleet({ perTest: true });

interface NulRow {
  status: string;
  error_code: string | null;
  error_message: string | null;
  last_error: string | null;
  consecutive_errors: number;
  result: unknown;
  progress: { message?: string } | null;
  input_required: unknown;
}

async function row(id: string): Promise<NulRow> {
  const rows = await fleet.db.query<NulRow>(
    `SELECT status, error_code, error_message, last_error, consecutive_errors, result, progress,
            input_required
       FROM tasks WHERE id = $1`,
    [id],
  );
  return rows[0];
}

it('NUL in a result, progress, question, error or transient error text is stored as U+FFFD', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'nul') });
  await fleet.poller(serversFile);
  const [completes, fails, flaky] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'nul',
      server: 'demo',
      input: {
        fault: 'nul_text',
        // The question lasts from 0.3 s to the end (6 s): 200 ms polls see it even on a host
        // that starves the poller for a few seconds (a 1.5 s window was missed once in CI).
        duration_ms: 6000,
        progress: true,
        input_required_after_ms: 300,
        input_required_for_ms: 5700,
        poll_after_seconds: 0.2,
        result: { answer: 42 },
      },
    },
    {
      toolset: 'nul',
      server: 'demo',
      input: { fault: 'nul_text', duration_ms: 300, outcome: 'fail', fail_message: 'broke' },
    },
    { toolset: 'nul', server: 'demo', input: { fault: 'nul_error_status', duration_ms: 60_000 } },
  ]);

  // The question, while the task waits for input.
  const asking = await waitUntil(
    async () => {
      const current = await row(completes);
      return current.status === 'input_required' ? current : undefined;
    },
    'the input_required episode to be stored',
    15_000,
  );
  // Wherever the stored shape keeps the question, it is there with U+FFFD and without NUL.
  expect(JSON.stringify(asking.input_required)).toContain(`${REPLACED}(nul)`);
  expect(JSON.stringify(asking.input_required)).not.toContain('\\u0000');
  expect(asking.progress?.message).toContain(`${REPLACED}(nul)`);

  // The result, with the NUL in a nested key and a nested string.
  const done = await waitUntil(
    async () => {
      const current = await row(completes);
      return current.status === 'completed' ? current : undefined;
    },
    'the NUL task to complete with its result',
    15_000,
  );
  expect(done.result).toEqual({
    [`key${REPLACED}nul`]: { nested: [`text${REPLACED}nul`] },
    value: { answer: 42 },
  });

  // The upstream's failure text.
  const failed = await waitUntil(
    async () => {
      const current = await row(fails);
      return current.status === 'failed' ? current : undefined;
    },
    'the NUL task to fail with its error',
    15_000,
  );
  expect([failed.error_code, failed.error_message]).toEqual([
    'upstream_failed',
    `broke${REPLACED}(nul)`,
  ]);

  // A transient isError text: counted and kept as last_error, as any other.
  const retried = await waitUntil(
    async () => {
      const current = await row(flaky);
      return current.consecutive_errors >= 2 ? current : undefined;
    },
    'the transient NUL error to be recorded',
    15_000,
  );
  expect(retried.status).toBe('working');
  expect(retried.last_error).toBe(
    `The demo server failed to read the status${REPLACED}(nul_error_status).`,
  );
});
