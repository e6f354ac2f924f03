/**
 * Guards against a fault harness that does not produce the fault: the proxy's lost reply must
 * leave the statement committed while the client sees only a dropped connection (or, with
 * silence after it, nothing until its own statement bound), a retarget must send new
 * connections to the other server, and a blackhole must silence open connections both ways
 * without closing them.
 */
import { Client } from 'pg';
import { useTestDatabase } from '../../helpers/db';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitUntil } from '../../helpers/wait';

const database = useTestDatabase();
let proxy: TcpProxy;

function portOf(url: string): number {
  return Number(new URL(url).port || 5432);
}

function viaProxy(url: string): string {
  const through = new URL(url);
  through.hostname = '127.0.0.1';
  through.port = String(proxy.port);
  return through.toString();
}

beforeAll(async () => {
  proxy = await startTcpProxy(portOf(database.url));
  await database.db.query('CREATE TABLE proxy_probe (id int PRIMARY KEY)');
});
afterAll(() => proxy.close());

test('a lost reply: the client loses its connection, the statement has committed', async () => {
  const client = new Client({ connectionString: viaProxy(database.url) });
  client.on('error', () => undefined);
  await client.connect();
  const fired = proxy.loseReplyTo((chunk) => chunk.includes('INSERT INTO proxy_probe'));
  await expect(client.query('INSERT INTO proxy_probe (id) VALUES (1)')).rejects.toThrow();
  await fired;
  await client.end().catch(() => undefined);
  const rows = await database.db.query<{ id: number }>('SELECT id FROM proxy_probe');
  expect(rows.map((row) => row.id)).toEqual([1]);
});

test('a lost reply, then silence: the client hears nothing until its bound, the statement has committed', async () => {
  // Its statements give up after 1 s: the only way this silence ends for the client.
  const client = new Client({ connectionString: viaProxy(database.url), query_timeout: 1000 });
  client.on('error', () => undefined);
  const ended = { yes: false };
  client.on('end', () => (ended.yes = true));
  await client.connect();
  const fired = proxy.loseReplyTo(
    (chunk) => chunk.includes('INSERT INTO proxy_probe'),
    1,
    'silence',
  );
  await expect(client.query('INSERT INTO proxy_probe (id) VALUES (2)')).rejects.toThrow(
    'Query read timeout',
  );
  await fired;
  // No FIN or RST reached the client: only its own bound ended the wait.
  expect(ended.yes).toBe(false);
  const rows = await database.db.query<{ id: number }>('SELECT id FROM proxy_probe WHERE id = 2');
  expect(rows.map((row) => row.id)).toEqual([2]);
  // Its goodbye is not passed on either: the proxy's close (afterAll) ends the connection.
  void client.end();
});

test('cutAll ends open connections; refuseNew refuses; retarget moves new connections', async () => {
  const client = new Client({ connectionString: viaProxy(database.url) });
  client.on('error', () => undefined);
  await client.connect();
  proxy.cutAll();
  await expect(client.query('SELECT 1')).rejects.toThrow();
  proxy.refuseNew(true);
  const refused = new Client({ connectionString: viaProxy(database.url) });
  refused.on('error', () => undefined);
  await expect(refused.connect()).rejects.toThrow();
  proxy.refuseNew(false);
  proxy.retarget(1); // nothing listens on port 1
  const nowhere = new Client({ connectionString: viaProxy(database.url) });
  nowhere.on('error', () => undefined);
  await expect(nowhere.connect()).rejects.toThrow();
  proxy.retarget(portOf(database.url));
  const again = new Client({ connectionString: viaProxy(database.url) });
  await again.connect();
  expect((await again.query<{ one: number }>('SELECT 1 AS one')).rows[0].one).toBe(1);
  await again.end();
});

test('blackhole: open connections forward nothing either way and stay open; new ones work', async () => {
  // Each statement of these clients gives up after 5 s: the only way a silence ends here.
  const open = async () => {
    const client = new Client({ connectionString: viaProxy(database.url), query_timeout: 5000 });
    client.on('error', () => undefined);
    const ended = { yes: false };
    client.on('end', () => (ended.yes = true));
    await client.connect();
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    return { client, pid, ended };
  };
  const activity = async (pid: number) =>
    (
      await database.db.query<{ state: string; query: string }>(
        'SELECT state, query FROM pg_stat_activity WHERE pid = $1',
        [pid],
      )
    )[0];
  const answering = await open();
  const asking = await open();
  // Sent before the blackhole, answered by the server after it: the answer must not get through.
  // 3 s, so the wait below sees it running on a slow host, and done before the 5 s timeout.
  const inFlight = answering.client.query('SELECT pg_sleep(3)');
  await waitUntil(
    async () => ((await activity(answering.pid))?.state === 'active' ? true : undefined),
    'the sleep running on the server',
  );
  proxy.blackhole();
  // Sent after it: the server must never see it.
  const sentAfter = asking.client.query('SELECT 2 AS two');
  await expect(inFlight).rejects.toThrow('Query read timeout');
  await expect(sentAfter).rejects.toThrow('Query read timeout');
  expect(await activity(answering.pid)).toEqual({ state: 'idle', query: 'SELECT pg_sleep(3)' });
  expect(await activity(asking.pid)).toEqual({
    state: 'idle',
    query: 'SELECT pg_backend_pid() AS pid',
  });
  // Neither side was closed: no FIN or RST reached the client, and the backends are still there.
  expect([answering.ended.yes, asking.ended.yes]).toEqual([false, false]);
  // A goodbye is passed on by a live pair, not by a blackholed one: of two idle clients that
  // close together, only the live one's backend ends, and the other is never answered.
  const silent = await open();
  proxy.blackhole();
  const live = await open(); // a new connection: forwarded as ever

  void silent.client.end();
  await live.client.end();
  await waitUntil(
    async () => ((await activity(live.pid)) === undefined ? true : undefined),
    "the live client's backend to end",
  );
  expect((await activity(silent.pid))?.state).toBe('idle');
  expect(silent.ended.yes).toBe(false);
  // pg ends a client whose statement still waits by destroying its socket; the silent one is
  // ended by the proxy's close.
  await Promise.all([answering.client.end(), asking.client.end()]);
  expect([answering.ended.yes, asking.ended.yes]).toEqual([true, true]);
});
