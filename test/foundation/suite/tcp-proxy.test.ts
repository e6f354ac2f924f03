/**
 * Guards against a fault harness that does not produce the fault: the proxy's lost reply must
 * leave the statement committed while the client sees only a dropped connection, and a retarget
 * must send new connections to the other server.
 */
import { Client } from 'pg';
import { useTestDatabase } from '../../helpers/db';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';

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
