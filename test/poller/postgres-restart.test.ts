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
  await pool.end();
  await postgres.stop();
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
  const completed = await after.query<{ n: string }>(
    `SELECT count(*) AS n FROM tasks WHERE id = ANY($1) AND status = 'completed'`,
    [ids],
  );
  // Submits sent while the database was down may honestly end outcome_uncertain; most complete.
  expect(Number(completed[0].n)).toBeGreaterThan(ids.length / 2);
});
