import 'reflect-metadata';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { parseLauncherSettings, runMain } from '@app/config';
import { EmbeddedDatabase, startEmbeddedPostgres } from '@app/dev-db';
import { Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../../migrations';
import {
  Child,
  hasExited,
  startChild,
  startGuardian,
  stopChild,
  waitForLine,
} from './child-process';
import { DEV_USER, ensureDevApiKey, ensureDevLinkKey } from './dev-api-key';
import { submitDemoTasks } from './demo-tasks';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const DIST = join(ROOT, 'dist', 'apps');
// Where the embedded cluster, the development key and the demo state live (tests use their own).
const DATA = resolve(process.env.LOCAL_DATA_DIR ?? join(ROOT, '.data'));
const DUPLICATE_SIGNAL_MS = 1000;

/**
 * `npm start`: the whole system on one machine. Without DATABASE_URL it runs an embedded
 * Postgres under .data/, applies migrations, then starts the demo MCP server (Streamable HTTP),
 * the API and one poller as child processes, and stops them all on Ctrl-C. However the launcher
 * ends (a SIGKILL runs none of its handlers), its guardian (guardian.ts) stops what is left.
 */
runMain('start', async () => {
  const settings = parseLauncherSettings(process.env);
  const guardian = startGuardian(join(__dirname, 'guardian.js'));
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = settings.database.url;
  if (!databaseUrl) {
    log('starting the embedded Postgres (data in .data/postgres)');
    embedded = await startEmbeddedPostgres({
      dataDir: join(DATA, 'postgres'),
      onRelocated: (dir) =>
        log(`the postgres OS user cannot reach this folder: the cluster lives in ${dir} instead`),
    });
    guardian.watchPostgres(embedded.dataDir);
    databaseUrl = await ensureDatabase(embedded.url, 'gateway');
  }
  const applied = await migrateDatabase(databaseUrl, MIGRATIONS, 'mcp-task-gateway-start');
  log(applied.length ? `applied migrations: ${applied.join(', ')}` : 'schema is up to date');
  const db = Database.connect({
    url: databaseUrl,
    poolSize: 2,
    appName: 'mcp-task-gateway-start',
    statementTimeoutMs: settings.database.statementTimeoutMs,
  });
  const devKey = await ensureDevApiKey(db, join(DATA, 'dev-api-key')).finally(() => db.close());

  const children: Child[] = [];
  // The API and the poller stop together (each drains on its own); the demo server goes last,
  // because the poller's drain may still be talking to it.
  const shutdown = async (code: number): Promise<never> => {
    const [demoChild, ...apps] = children;
    await Promise.all(apps.map((child) => stopChild(child, 40_000)));
    if (demoChild) await stopChild(demoChild, 10_000);
    if (embedded) await embedded.stop();
    process.exit(code);
  };
  let stopping = false;
  let firstSignalAt = 0;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      // One Ctrl-C can reach us twice (the terminal's group signal, and npm forwarding its own):
      // a repeat within a second is the same request, not a second one.
      if (stopping && Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
      if (stopping) {
        // A second Ctrl-C: pass it on; each child takes a second signal as "exit now".
        log(`${signal} again: stopping without draining`);
        for (const child of children) if (!hasExited(child)) child.process.kill('SIGTERM');
        return;
      }
      stopping = true;
      firstSignalAt = Date.now();
      log(`${signal}: stopping`);
      void shutdown(0);
    });
  }
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
    // The development key may use the operator routes (/v1/admin/*), so the local default shows them.
    ADMIN_USERS: process.env.ADMIN_USERS ?? DEV_USER,
    // Only this machine reaches the API: the development key sits in .data/ in plain text.
    HOST: process.env.HOST ?? '127.0.0.1',
    // Answer links on (docs/console.md): events carry links to this machine's console.
    PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${settings.http.port}`,
    ANSWER_LINK_KEYS:
      process.env.ANSWER_LINK_KEYS ?? ensureDevLinkKey(join(DATA, 'answer-link-key')),
  };
  const demo = startChild(
    'demo-server',
    join(DIST, 'demo-server', 'main.js'),
    [
      '--transport',
      'http',
      '--port',
      process.env.DEMO_SERVER_PORT ?? '0',
      '--state-file',
      join(DATA, 'demo-state.json'),
    ],
    env,
  );
  guardian.watchChild(demo);
  children.push(demo);
  const [, demoUrl] = await waitForLine(demo, /listening on (http:\/\/\S+)/, 20_000);
  const appEnv = {
    ...env,
    DEMO_SERVER_URL: `${demoUrl}/mcp`,
    // The same process's strict 2026-07-28 endpoint: it refuses sessions (docs/demo-server.md).
    DEMO_SERVER_STRICT_URL: `${demoUrl}/mcp-2026`,
    // The demo server again, strict 2026-07-28 over stdio: a child of the poller.
    DEMO_SERVER_NODE: process.execPath,
    DEMO_SERVER_MAIN: join(DIST, 'demo-server', 'main.js'),
    MCP_SERVERS_FILE:
      process.env.MCP_SERVERS_FILE ?? join(ROOT, 'deploy', 'local', 'mcp-servers.json'),
  };
  children.push(
    startChild('poller', join(DIST, 'poller', 'main.js'), [], {
      ...appEnv,
      METRICS_PORT: process.env.POLLER_METRICS_PORT ?? '9465',
    }),
  );
  children.push(startChild('api', join(DIST, 'api', 'main.js'), [], appEnv));
  for (const child of children.slice(1)) guardian.watchChild(child);
  for (const child of children) {
    void child.exited.then((code) => {
      if (stopping) return;
      log(`${child.name} exited (code ${String(code)}); stopping everything`);
      stopping = true;
      void shutdown(1);
    });
  }
  const base = `http://127.0.0.1:${settings.http.port}`;
  log(`API:     ${base}/v1   (OpenAPI page: ${base}/docs)`);
  log(`MCP:     ${base}/mcp  (the front door: docs/mcp.md)`);
  log(`Console: ${base}/console  (sign in with the key in .data/dev-api-key: docs/console.md)`);
  log(
    `API key: ${devKey.created ? 'created' : 'kept'} in .data/dev-api-key (an operator: /v1/admin)`,
  );
  log('push:    the demo server pushes task changes and the poller subscribes, so its tasks are');
  log('         polled only every PUSH_SAFETY_POLL_FACTOR intervals (docs/connections.md, "Push")');
  log('strict:  demo-strict is a server that refuses sessions; the gateway finds that and calls');
  log('         its tools without one (docs/connections.md, "Which side serves")');
  log('stdio:   demo-stdio is the demo server as a child of the poller, speaking 2026-07-28 only');
  log(
    '         over stdio; its tasks live in that child (docs/connections.md, "MCP 2026-07-28 over stdio")',
  );
  log(
    '         demo-stdio-2025 is another child, on a 2025-11-25 session that pushes task changes',
  );
  log(`try:     curl -H "Authorization: Bearer $(cat .data/dev-api-key)" ${base}/v1/toolsets`);
  void submitDemoTasks(base, devKey.key, log);
});

async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new Client({ connectionString: serverUrl });
  // A connection lost between statements is an 'error' event: the next query fails on its own.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function log(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}
