// Guards against a Postgres restart mid-run killing pollers or losing tasks: they reconnect and finish.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'pg';
import { createDataSource, Database, runMigrations } from '@app/persistence';
import { countTerminal, insertFleetTasks, submitViolations } from '../helpers/fleet-tasks';
import {
  demoServerEntry,
  startDemoServer,
  startPoller,
  stopAllProcesses,
  writeServersFile,
} from '../helpers/processes';
import { PostgresProcess, startPostgresProcess } from '../helpers/postgres-process';
import { waitUntil } from '../helpers/wait';

// Under .data like the run's own server: the postgres OS user must be able to reach it (root's
// 0700 temp directories are not).
const dataDir = join(__dirname, '..', '..', '.data', `pg-restart-${process.pid}`, 'pg');
let postgres: PostgresProcess;
let pool: Pool;

afterAll(async () => {
  await stopAllProcesses();
  await pool?.end().catch(() => undefined);
  await postgres?.stop().catch(() => undefined);
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
});

it('pollers ride out a Postgres restart and every task still ends, submitted once', async () => {
  postgres = await startPostgresProcess(dataDir);
  const dataSource = createDataSource(postgres.url, 2, 'restart-test');
  await dataSource.initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  pool = new Pool({ connectionString: postgres.url, max: 4 });
  // The server is stopped under it on purpose: an idle client's 57P01 must not be unhandled.
  pool.on('error', () => undefined);
  const db = new Database(pool);
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  const pollers = await Promise.all(
    [1, 2].map(() => startPoller({ databaseUrl: postgres.url, serversFile })),
  );
  const ids = await insertFleetTasks(
    db,
    Array.from({ length: 80 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 3000 + (i % 4) * 500, tag: `pg-${i}` },
    })),
  );
  await waitUntil(async () => {
    const rows = await db.query(`SELECT 1 FROM tasks WHERE status = 'working' LIMIT 1`);
    return rows.length > 0 ? true : undefined;
  }, 'work under way');
  // Frozen while the database goes down, so the submits on the wire at that moment are known:
  // they alone may honestly end outcome_uncertain (no submit starts while it is down).
  for (const poller of pollers) poller.pause();
  const onTheWire = await db.query<{ id: string }>(
    `SELECT id FROM tasks WHERE id = ANY($1) AND submit_started_at IS NOT NULL
        AND remote_task_id IS NULL AND completed_at IS NULL`,
    [ids],
  );
  await pool.end();
  await postgres.stop();
  for (const poller of pollers) poller.resume();
  // Down for two seconds: claims, heartbeats and writes all fail meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  postgres = await startPostgresProcess(dataDir, postgres.port);
  pool = new Pool({ connectionString: postgres.url, max: 4 });
  // The server is stopped under it on purpose: an idle client's 57P01 must not be unhandled.
  pool.on('error', () => undefined);
  const after = new Database(pool);
  await waitUntil(
    async () => ((await countTerminal(after, ids)) === ids.length ? true : undefined),
    'every task terminal after the restart',
    60_000,
    200,
  );
  for (const poller of pollers) expect(poller.child.exitCode).toBeNull();
  expect(await submitViolations(after, ids, (await demo.stats()).by_tag)).toEqual([]);
  const notCompleted = await after.query<{ id: string }>(
    `SELECT id FROM tasks WHERE id = ANY($1) AND status <> 'completed'`,
    [ids],
  );
  // Every other task completes; only a submit on the wire at the outage may end otherwise
  // (submitViolations above: then failed/outcome_uncertain, never anything else).
  const allowed = new Set(onTheWire.map((r) => r.id));
  expect(notCompleted.map((r) => r.id).filter((id) => !allowed.has(id))).toEqual([]);
});
