// Guards tracking_timeout: a task whose status calls keep failing ends failed, not retried forever; a healthy one never does.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// 3 s: room for at least three failed polls (backoff 100, 200, 400 ms, ...) even when a loaded
// machine stretches each attempt; with 2 s a loaded run saw only two.
const TRACKING_TIMEOUT_MS = 3000;
const MAX_BACKOFF_MS = 1000;
// Ends by the first attempt after the timeout: at most one backoff (+20 % jitter) later, plus
// claim latency and process scheduling on a loaded box.
const SLACK_MS = 1.2 * MAX_BACKOFF_MS + 1500;

const fleet = useFleet({ perTest: true });

interface TrackedRow {
  id: string;
  status: string;
  error_code: string | null;
  error_message: string | null;
  last_error: string | null;
  consecutive_errors: number;
  /** Milliseconds from the last successful contact (the submit here) to the end, DB clock. */
  silent_ms: number | null;
}

async function tracked(ids: string[]): Promise<Map<string, TrackedRow>> {
  const rows = await fleet.db.query<TrackedRow>(
    `SELECT id, status, error_code, error_message, last_error, consecutive_errors,
            extract(epoch FROM completed_at - coalesce(last_success_at, submitted_at)) * 1000
              AS silent_ms
       FROM tasks WHERE id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { ...r, silent_ms: r.silent_ms && Number(r.silent_ms) }]));
}

it('status calls failing transiently end the task failed/tracking_timeout, errors counted meanwhile', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  await fleet.poller(serversFile, {
    env: {
      TRACKING_TIMEOUT_MS: String(TRACKING_TIMEOUT_MS),
      MAX_BACKOFF_MS: String(MAX_BACKOFF_MS),
      BACKOFF_BASE_MS: '100',
    },
  });
  const upstreamText = `upstream overloaded: ${'x'.repeat(900)}`;
  const [flaky, healthy] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'demo-ordinary',
      server: 'demo',
      input: {
        duration_ms: 60_000,
        fault: 'error_status',
        fault_detail: upstreamText,
        tag: 'flaky',
      },
    },
    // Runs longer than the timeout with every poll succeeding: the clock restarts at each one.
    {
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 3 * TRACKING_TIMEOUT_MS, tag: 'healthy' },
    },
  ]);
  const seen: TrackedRow[] = [];
  const ends = await waitUntil(
    async () => {
      const rows = await tracked([flaky, healthy]);
      const row = rows.get(flaky)!;
      if (row.status === 'working') seen.push(row);
      return [...rows.values()].every((r) => r.silent_ms !== null) ? rows : undefined;
    },
    'both tasks to end',
    3 * TRACKING_TIMEOUT_MS + 15_000,
    50,
  );
  const end = ends.get(flaky)!;
  expect([end.status, end.error_code]).toEqual(['failed', 'tracking_timeout']);
  expect(end.error_message).toMatch(/^no successful poll for \d+ s \(TRACKING_TIMEOUT_MS\)/);
  expect(end.error_message!.length).toBeLessThanOrEqual(4000);
  expect(end.silent_ms).toBeGreaterThanOrEqual(TRACKING_TIMEOUT_MS);
  expect(end.silent_ms).toBeLessThan(TRACKING_TIMEOUT_MS + SLACK_MS);
  // Meanwhile: the error count grew one by one and the upstream's text was kept, bounded.
  const counts = [...new Set(seen.map((r) => r.consecutive_errors))];
  expect(counts).toEqual([...counts].sort((a, b) => a - b));
  expect(Math.max(...counts)).toBeGreaterThanOrEqual(3);
  expect(end.consecutive_errors).toBeGreaterThanOrEqual(Math.max(...counts));
  const withError = seen.filter((r) => r.consecutive_errors > 0);
  expect(withError.length).toBeGreaterThan(0);
  for (const row of withError) {
    expect(row.last_error).toContain('upstream overloaded: xxx');
    expect(row.last_error).toHaveLength(500); // the 921-char text, cut
  }
  expect(end.last_error).toContain('upstream overloaded');
  const ok = ends.get(healthy)!;
  expect([ok.status, ok.error_code, ok.consecutive_errors]).toEqual(['completed', null, 0]);
  expect((await demo.stats()).ordinary.status_calls).toBeGreaterThan(end.consecutive_errors);
});
