// Guards against a process ending on a Postgres restart (libs/persistence/src/database.ts,
// `withClient`). pg-pool hands a freed connection to a waiting checkout while pg still reads the
// answer that freed it; when the server's "terminating connection" came in the same chunk, it was
// an `error` event on a client nobody listened to yet, and a poller ended with it (docs/chaos.md,
// "Findings"). The proxy holds the server's bytes so that the answer and the termination arrive
// together, as a loaded reader gets them.
import { Database, isDatabaseUnavailable } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitUntil } from '../../helpers/wait';

const database = useTestDatabase();
let proxy: TcpProxy;
let admin: Database;
const opened: Database[] = [];

beforeAll(async () => {
  proxy = await startTcpProxy(Number(new URL(database.url).port || 5432));
  admin = Database.connect({ url: database.url, poolSize: 1, appName: 'checkout-error-admin' });
});
afterAll(async () => {
  await proxy?.close();
  await Promise.all([admin, ...opened].map((db) => db.close()));
});

/** The apps' pool of one connection, through the proxy. */
function open(): Database {
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  const db = Database.connect({ url: url.toString(), poolSize: 1, appName: 'checkout-error' });
  opened.push(db);
  return db;
}

/** The backend's state in pg_stat_activity, or undefined once it is gone. */
async function backendState(pid: number): Promise<string | undefined> {
  const rows = await admin.query<{ state: string }>(
    'SELECT state FROM pg_stat_activity WHERE pid = $1',
    [pid],
  );
  return rows[0]?.state;
}

test('a connection killed in the chunk that frees it fails the waiting transaction, not the process', async () => {
  const db = open();
  const [{ pid }] = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const held = proxy.holdReplies();
  // The pool's one connection runs this; its answer waits in the proxy.
  const first = db.query<{ one: number }>('SELECT 1 AS one');
  // And this waits for that connection.
  const waiting = db.transaction((tx) => tx.query('SELECT 2'));
  await waitUntil(
    async () => ((await backendState(pid)) === 'idle' ? true : undefined),
    'the first statement to have run',
  );
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  // Gone from pg_stat_activity is not enough: under load the proxy may not have read the
  // termination yet, and released early the client got the answer and then a bare close.
  await waitUntil(
    () => (held.serverClosed() ? true : undefined),
    'the proxy to hold the server close',
  );
  // Its answer, then "terminating connection", then the close: one chunk for the client.
  held.release();
  await expect(first).resolves.toEqual([{ one: 1 }]);
  // As the database being away (the API's 503), with the server's own words.
  const error = await waiting.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isDatabaseUnavailable(error)).toBe(true);
  expect((error as Error).message).toMatch(/terminating connection/);
  // The pool goes on with a new connection.
  await expect(db.query<{ three: number }>('SELECT 3 AS three')).resolves.toEqual([{ three: 3 }]);
});
