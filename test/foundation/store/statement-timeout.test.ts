// Guards the statement bound of the gateway's pools (libs/persistence/src/database.ts,
// `statementBounds`): a statement whose answer never comes (its server vanished, the connection
// left open) fails within the bound as "unavailable", in a transaction too, and the connection
// that still waits for that answer is never handed out again; and the server stops a statement
// nobody waits for any more.
import { Database, isDatabaseUnavailable } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitUntil } from '../../helpers/wait';

const STATEMENT_TIMEOUT_MS = 2000;
const APP = 'statement-timeout-test';
const database = useTestDatabase();
let proxy: TcpProxy;
const opened: Database[] = [];

beforeAll(async () => {
  proxy = await startTcpProxy(Number(new URL(database.url).port || 5432));
});
afterAll(async () => {
  await proxy?.close();
  await Promise.all(opened.map((db) => db.close()));
});

/** A pool as the apps open one, through the proxy (or straight to the server). */
function open(throughProxy = true): Database {
  const url = new URL(database.url);
  if (throughProxy) {
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
  }
  const db = Database.connect({
    url: url.toString(),
    poolSize: 2,
    appName: APP,
    statementTimeoutMs: STATEMENT_TIMEOUT_MS,
  });
  opened.push(db);
  return db;
}

test('a statement on a silent connection fails as unavailable; the connection is dropped', async () => {
  const db = open();
  await db.query('SELECT 1');
  proxy.blackhole();
  const error = await db.query('SELECT 2').catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect(isDatabaseUnavailable(error)).toBe(true);
  expect(db.pool.totalCount).toBe(0);
  expect(await db.query<{ n: number }>('SELECT 3 AS n')).toEqual([{ n: 3 }]);
});

test('a transaction whose statement goes unanswered fails within the bound, its client dropped', async () => {
  const db = open();
  const started = Date.now();
  const error = await db
    .transaction(async (tx) => {
      await tx.query('SELECT 1');
      proxy.blackhole();
      await tx.query('SELECT 2');
    })
    .catch((e: unknown) => e);
  // Not twice the bound: no ROLLBACK is queued behind the statement that still waits (1.75×
  // leaves room for a slow host and still tells the two apart).
  expect(Date.now() - started).toBeLessThan(1.75 * STATEMENT_TIMEOUT_MS);
  expect(isDatabaseUnavailable(error)).toBe(true);
  // Not back in the pool for the next transaction, whose BEGIN would queue behind it too.
  expect(db.pool.totalCount).toBe(0);
  expect(await db.transaction((tx) => tx.query<{ n: number }>('SELECT 4 AS n'))).toEqual([
    { n: 4 },
  ]);
});

test('the server stops a statement past the bound; its sessions carry the bounds', async () => {
  const db = open(false);
  expect(
    await db.query<{ statement: string; idle: string }>(
      `SELECT current_setting('statement_timeout') AS statement,
              current_setting('idle_in_transaction_session_timeout') AS idle`,
    ),
  ).toEqual([{ statement: '2s', idle: '2s' }]);
  const error = await db.query('SELECT pg_sleep(60)').catch((e: unknown) => e);
  expect(isDatabaseUnavailable(error)).toBe(true);
  // Cancelled by the server at the bound, not left to sleep out its minute for nobody.
  await waitUntil(
    async () => {
      const rows = await database.db.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE application_name = $1 AND state = 'active' AND query LIKE 'SELECT pg_sleep%'`,
        [APP],
      );
      return rows.length === 0 ? true : undefined;
    },
    'the sleep to be stopped on the server',
    STATEMENT_TIMEOUT_MS,
  );
});
