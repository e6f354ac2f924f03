// Guards docs/operations.md, "Starting before the database": a poller or an API started while
// Postgres refuses its connections waits for it, saying so without the URL's password, and starts
// when it is back; one that loses it right after that wait still starts, waits for it, and then
// publishes the catalog the database refused meanwhile; past DATABASE_STARTUP_WAIT_MS it exits
// with a sentence naming that setting; a database that does not exist and a schema that lacks a
// migration are errors of setup, not waited for.
import { AUDIENCE, ISSUER, JWT_SECRET } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { demoServerEntry, writeServersFile } from '../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet({ perTest: true });
let proxy: TcpProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/**
 * The password of the URL the process is given: the database's own when it has one (the
 * embedded Postgres of the Node 24 pass), else one that trust auth ignores. It must appear in no
 * line the process writes.
 */
let password = '';

/**
 * The fleet's database through a proxy that refuses every connection until told otherwise, or,
 * given `after`, every connection after that many.
 */
async function refusingUrl(after?: number): Promise<string> {
  const target = new URL(fleet.url);
  proxy = await startTcpProxy(Number(target.port || 5432));
  if (after === undefined) proxy.refuseNew(true);
  else proxy.refuseAfter(after);
  const url = new URL(fleet.url);
  url.port = String(proxy.port);
  if (url.password === '') {
    url.username = url.username || 'postgres';
    url.password = 'start-wait-secret-7731';
  }
  password = decodeURIComponent(url.password);
  return url.toString();
}

/** A servers file the poller loads before it looks for its database (no server is reached). */
function serversFile(): string {
  return writeServersFile({ demo: { url: 'http://127.0.0.1:9/mcp' } });
}

const WAITING = 'database unreachable at start; waiting for it';

/** An API process on `databaseUrl`, its ports free ones, its log lines JSON. */
function startApi(databaseUrl: string) {
  return fleet.node('apps/api/main.js', [], {
    DATABASE_URL: databaseUrl,
    PORT: '0',
    METRICS_PORT: '0',
    LOG_FORMAT: 'json',
    AUTH_JWT_SECRET: JWT_SECRET,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
  });
}

it('waits for a database that refuses it, then starts', async () => {
  const demo = await fleet.demo();
  const poller = await fleet.poller(
    { demo: { url: demo.url } },
    { env: { DATABASE_URL: await refusingUrl() }, waitReady: false },
  );
  // Two refused attempts, each said as it happened (not buffered until the app exists).
  await waitUntil(
    () => poller.logs.filter((line) => line.msg === WAITING).length >= 2 || undefined,
    'two waiting lines',
  );
  expect(poller.child.exitCode).toBeNull();
  const first = poller.logs.find((line) => line.msg === WAITING);
  expect(first).toMatchObject({ reason: expect.any(String), retryInMs: expect.any(Number) });

  proxy?.refuseNew(false);
  await waitUntil(async () => {
    const rows = await fleet.db.query(`SELECT 1 FROM workers WHERE id = $1`, [poller.workerId]);
    return rows.length > 0 || undefined;
  }, 'the poller registered after the database came back');
  expect(poller.logs.some((line) => line.msg === 'database reachable; starting')).toBe(true);
  const written = JSON.stringify(poller.logs) + poller.stderr();
  expect(written).not.toContain(password);
});

it('a database lost right after the wait does not end the start: the poller waits for it', async () => {
  // The start's wait (its one connection, the schema check) gets through; everything after is
  // refused: a Postgres restart that began just after the wait, as the chaos run met one.
  const demo = await fleet.demo();
  // A server of its own: its toolset is in no catalog row yet (the file's other tests publish
  // `demo`), so only a publish made after the database came back can write it.
  const poller = await fleet.poller(
    { afterwait: demoServerEntry(demo.url, 'afterwait') },
    { env: { DATABASE_URL: await refusingUrl(1) }, waitReady: false },
  );
  await waitUntil(
    () =>
      poller.logs.filter((line) => line.msg === 'database not answering yet').length >= 2 ||
      undefined,
    'the built poller waiting for its database',
  );
  // The server connected meanwhile, and the catalog publish of its connect was refused.
  await waitUntil(
    () =>
      poller.logs.some((line) => String(line.msg).startsWith('catalog publish failed')) ||
      undefined,
    'a catalog publish refused',
  );
  expect(poller.child.exitCode).toBeNull();
  expect(poller.logs.some((line) => line.msg === WAITING)).toBe(false);

  proxy?.refuseNew(false);
  await waitUntil(async () => {
    const rows = await fleet.db.query(`SELECT 1 FROM workers WHERE id = $1`, [poller.workerId]);
    return rows.length > 0 || undefined;
  }, 'the poller registered after the database came back');
  // That publish was made again once the database was back: the API knows the toolset.
  await waitUntil(async () => {
    const rows = await fleet.db.query<{ available: boolean }>(
      `SELECT available FROM toolsets WHERE server = 'afterwait'`,
    );
    return rows.length > 0 && rows.every((row) => row.available) ? true : undefined;
  }, "the server's toolsets published once the database came back");
  expect(JSON.stringify(poller.logs) + poller.stderr()).not.toContain(password);
});

it('past DATABASE_STARTUP_WAIT_MS exits 1 with a sentence naming it', async () => {
  const child = fleet.node('apps/poller/main.js', [], {
    DATABASE_URL: await refusingUrl(),
    DATABASE_STARTUP_WAIT_MS: '600',
    MCP_SERVERS_FILE: serversFile(),
    METRICS_PORT: '0',
    LOG_FORMAT: 'json',
  });
  expect(await child.exited).toBe(1);
  const stderr = child.stderr.join('\n');
  expect(stderr).toMatch(
    /^poller: failed to start: the database was unreachable at start \([^)]+\) and still was after \d+ s; DATABASE_STARTUP_WAIT_MS sets how long a process waits for it$/m,
  );
  expect(stderr + child.lines.join('\n')).not.toContain(password);
});

it('does not wait for a database that does not exist', async () => {
  const url = new URL(fleet.url);
  url.pathname = '/mtg_no_such_database';
  const child = fleet.node('apps/poller/main.js', [], {
    DATABASE_URL: url.toString(),
    MCP_SERVERS_FILE: serversFile(),
    METRICS_PORT: '0',
    LOG_FORMAT: 'json',
  });
  expect(await child.exited).toBe(1);
  expect(child.stderr.join('\n')).toContain('mtg_no_such_database');
  expect(child.lines.join('\n')).not.toContain(WAITING);
});

it('does not wait for a schema that lacks a migration: it exits 1 naming it', async () => {
  const [removed] = await fleet.db.query<{ id: number; timestamp: string; name: string }>(
    `DELETE FROM schema_migrations
      WHERE id = (SELECT max(id) FROM schema_migrations) RETURNING id, timestamp, name`,
  );
  try {
    const child = fleet.node('apps/poller/main.js', [], {
      DATABASE_URL: fleet.url,
      MCP_SERVERS_FILE: serversFile(),
      METRICS_PORT: '0',
      LOG_FORMAT: 'json',
    });
    expect(await child.exited).toBe(1);
    expect(child.stderr.join('\n')).toContain(
      `poller: failed to start: database schema is missing migration(s): ${removed.name}; run "npm run migrate" first`,
    );
    expect(child.lines.join('\n')).not.toContain(WAITING);
  } finally {
    await fleet.db.query(
      `INSERT INTO schema_migrations (id, timestamp, name) VALUES ($1, $2, $3)`,
      [removed.id, removed.timestamp, removed.name],
    );
  }
});

it('an API waits the same way, then listens', async () => {
  const child = startApi(await refusingUrl());
  await child.waitForLine(new RegExp(WAITING));
  expect(child.child.exitCode).toBeNull();
  proxy?.refuseNew(false);
  await child.waitForLine(/api listening on port \d+/);
  expect(child.lines.join('\n') + child.stderr.join('\n')).not.toContain(password);
});

it('an API that loses its database right after the wait listens, not ready until it is back', async () => {
  const child = startApi(await refusingUrl(1));
  const listening = await child.waitForLine(/api listening on port (\d+)/);
  const port = /api listening on port (\d+)/.exec(listening)?.[1];
  const ready = async () => (await fetch(`http://127.0.0.1:${port}/healthz/ready`)).status;
  expect(await ready()).toBe(503);
  proxy?.refuseNew(false);
  await waitUntil(
    async () => ((await ready()) === 200 ? true : undefined),
    'ready once it is back',
  );
  expect(child.lines.join('\n') + child.stderr.join('\n')).not.toContain(password);
});
