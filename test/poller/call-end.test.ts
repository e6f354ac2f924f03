// Guards a held call's end against a database that is down when the call answers (docs/leases.md,
// "A held call's end"): the end is the only record of a call that cannot be repeated, so its
// write waits for the database with the claim kept, and the task completes, called once.
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { useOwnPostgres } from '../helpers/postgres-process';
import { startDemoServer, startPoller, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// The lease (20 s, renewed every 6.7 s) outlasts the outage: the claim is kept through it.
const ENV = { LEASE_MS: '20000' };

const postgres = useOwnPostgres('held-end', 4);

it('a held call that answers while Postgres is down has its end stored once it is back', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({
    demo: {
      url: `${demo.url}/mcp`,
      connectTimeoutMs: 3000,
      callTimeoutMs: 3000,
      taskToolsets: [
        { name: 'held', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60_000 },
      ],
    },
  });
  const poller = await startPoller({ databaseUrl: postgres.url, serversFile, env: ENV });
  const tag = `held-end-${Date.now()}`;
  const [id] = await insertFleetTasks(postgres.db, [
    { toolset: 'held', server: 'demo', contract: 'sync-call', input: { duration_ms: 1500, tag } },
  ]);
  await waitUntil(async () => {
    const rows = await postgres.db.query(
      `SELECT 1 FROM tasks WHERE id = $1 AND status = 'working'`,
      [id],
    );
    return rows.length > 0 ? true : undefined;
  }, 'the call to be held');
  await postgres.stop();
  // The call answers 1.5 s in, with the database down: its end has nowhere to go yet.
  await waitUntil(
    async () => {
      const stats = (await demo.stats(tag)) as unknown as { sync: { completed: number } };
      return stats.sync.completed > 0 ? true : undefined;
    },
    'the call to answer',
    20_000,
  );
  await postgres.restart();
  const ended = await waitUntil(
    async () => {
      const rows = await postgres.db.query<{
        status: string;
        error_code: string | null;
        claim_count: number;
      }>(
        `SELECT status, error_code, claim_count FROM task_rows
          WHERE id = $1 AND status IN ('completed', 'failed', 'cancelled')`,
        [id],
      );
      return rows[0];
    },
    'the task to end',
    60_000,
  );
  expect(ended).toEqual({ status: 'completed', error_code: null, claim_count: 1 });
  // It waited for the database, with the claim kept.
  expect(poller.logs.some((l) => l.msg === "storing the held call's end failed; retrying")).toBe(
    true,
  );
  expect((await demo.stats(tag)).by_tag[tag]?.submits).toBe(1);
});
