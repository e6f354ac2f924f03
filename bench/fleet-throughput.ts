/**
 * Fleet throughput: tasks per second from insert to terminal, through real poller processes and
 * the real demo MCP server over Streamable HTTP.
 *
 *   npm run build && node dist/bench/fleet-throughput.js [tasks=1000] [pollers=2] [slots=32]
 *
 * Uses DATABASE_URL's server when set (a scratch database is created on it), else an embedded
 * Postgres under .data/. Each task is an `ordinary` demo job with duration_ms 0: one submit and
 * one status poll upstream, so the number measures the fleet and the upstream, not the work.
 */
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, EmbeddedDatabase } from '@app/dev-db';
import { Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../migrations';
import { countTerminal, insertFleetTasks } from '../test/helpers/fleet-tasks';
import {
  demoServerEntry,
  startDemoServer,
  startPoller,
  stopAllProcesses,
  writeServersFile,
} from '../test/helpers/processes';
import { waitUntil } from '../test/helpers/wait';

async function main(): Promise<void> {
  const [tasks = 1000, pollers = 2, slots = 32] = process.argv.slice(2).map(Number);
  let embedded: EmbeddedDatabase | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: join(__dirname, '..', '..', '.data', `bench-pg-${process.pid}`),
      ephemeral: true,
    });
    serverUrl = embedded.url;
  }
  const name = `mtg_bench_${process.pid}`;
  const admin = new Client({ connectionString: serverUrl });
  // A connection lost between statements is an 'error' event: the next query fails on its own.
  admin.on('error', () => undefined);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  await migrateDatabase(databaseUrl, MIGRATIONS, 'bench');
  const db = Database.connect({ url: databaseUrl, poolSize: 4, appName: 'bench' });
  try {
    const demo = await startDemoServer();
    const serversFile = writeServersFile({
      demo: demoServerEntry(demo.url, 'demo-ordinary', { maxConcurrentCalls: slots }),
    });
    const env = { WORKER_SLOTS: String(slots), LOG_LEVEL: 'warn', POLL_INTERVAL_MS: '100' };
    await Promise.all(
      Array.from({ length: pollers }, () => startPoller({ databaseUrl, serversFile, env })),
    );
    const started = Date.now();
    const ids = await insertFleetTasks(
      db,
      Array.from({ length: tasks }, (_, i) => ({
        toolset: 'demo-ordinary',
        server: 'demo',
        input: { duration_ms: 0, tag: `bench-${i}` },
      })),
    );
    await waitUntil(
      async () => ((await countTerminal(db, ids)) === ids.length ? true : undefined),
      'all tasks terminal',
      600_000,
      50,
    );
    const seconds = (Date.now() - started) / 1000;
    const rows = await db.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM tasks GROUP BY status ORDER BY status`,
    );
    process.stdout.write(
      `${tasks} tasks, ${pollers} pollers × ${slots} slots: ${seconds.toFixed(2)} s, ` +
        `${(tasks / seconds).toFixed(1)} tasks/s (${rows.map((r) => `${r.status} ${r.n}`).join(', ')})\n`,
    );
  } finally {
    await stopAllProcesses();
    await db.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    if (embedded) await embedded.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
