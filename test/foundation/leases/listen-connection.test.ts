// Guards the process's one LISTEN connection (libs/persistence/src/listen-connection.ts): several
// channels and listeners share one Postgres connection, each listener hears only its channel,
// and a cut connection tells every listener that it lost it, reopens, and then says "you may have
// missed notifications" (null) before anything new; so does a connection gone silent (its server
// vanished without closing it), found by the liveness check. Also pins the channel list: the
// migrated schema notifies no channel missing from CHANNELS.
import {
  API_KEY_REVOKED_CHANNEL,
  Channel,
  ChannelSubscriber,
  CHANNELS,
  ListenConnection,
  TASK_EVENTS_CHANNEL,
  TASKS_DUE_CHANNEL,
} from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { startTcpProxy, type TcpProxy } from '../../helpers/tcp-proxy';
import { waitUntil } from '../../helpers/wait';

const database = useTestDatabase();
let proxy: TcpProxy;
let connection: ListenConnection;
const APP = 'listen-connection-test';

/** A subscriber that writes down what it hears, in order. */
function recorder(): ChannelSubscriber & { heard: string[] } {
  const heard: string[] = [];
  return {
    heard,
    onNotify: (payload) => heard.push(payload === null ? 'missed' : `notify ${payload}`),
    onListening: () => heard.push('listening'),
    onLost: () => heard.push('lost'),
  };
}

const notify = (channel: Channel, payload: string) =>
  database.db.query('SELECT pg_notify($1, $2)', [channel, payload]);

async function connections(): Promise<number> {
  const rows = await database.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`,
    [APP],
  );
  return Number(rows[0].n);
}

beforeAll(async () => {
  proxy = await startTcpProxy(Number(new URL(database.url).port || 5432));
  const through = new URL(database.url);
  through.hostname = '127.0.0.1';
  through.port = String(proxy.port);
  connection = new ListenConnection({ url: through.toString(), appName: APP });
});
afterAll(async () => {
  await connection?.close();
  await proxy?.close();
});

test('listeners of several channels share one connection and hear only their channel', async () => {
  const due = recorder();
  const events = recorder();
  const stopDue = connection.subscribe(TASKS_DUE_CHANNEL, due);
  const stopEvents = connection.subscribe(TASK_EVENTS_CHANNEL, events);
  await waitUntil(
    () =>
      due.heard.includes('listening') && events.heard.includes('listening') ? true : undefined,
    'both listeners listening',
  );
  expect(await connections()).toBe(1);

  // A listener that joins the open connection is told once its channel is heard.
  const keys = recorder();
  const stopKeys = connection.subscribe(API_KEY_REVOKED_CHANNEL, keys);
  await waitUntil(() => (keys.heard.includes('listening') ? true : undefined), 'the third one');
  expect(await connections()).toBe(1);

  await notify(TASKS_DUE_CHANNEL, 'submit');
  await notify(API_KEY_REVOKED_CHANNEL, 'k1');
  await notify(TASK_EVENTS_CHANNEL, '["u","t"]');
  await waitUntil(() => (events.heard.length === 2 ? true : undefined), 'the event');
  expect(due.heard).toEqual(['listening', 'notify submit']);
  expect(keys.heard).toEqual(['listening', 'notify k1']);
  expect(events.heard).toEqual(['listening', 'notify ["u","t"]']);

  // The connection closes with its last listener.
  await stopDue();
  await stopEvents();
  expect(await connections()).toBe(1);
  await stopKeys();
  await waitUntil(async () => ((await connections()) === 0 ? true : undefined), 'closed');
});

test('a cut connection: every listener learns it lost it, then that it may have missed some', async () => {
  const due = recorder();
  const keys = recorder();
  const stopDue = connection.subscribe(TASKS_DUE_CHANNEL, due);
  const stopKeys = connection.subscribe(API_KEY_REVOKED_CHANNEL, keys);
  await waitUntil(
    () => (due.heard.includes('listening') && keys.heard.includes('listening') ? true : undefined),
    'both listening',
  );
  proxy.refuseNew(true);
  proxy.cutAll();
  await waitUntil(
    () => (due.heard.includes('lost') && keys.heard.includes('lost') ? true : undefined),
    'both told of the loss',
  );
  // Sent while nobody listens: gone, which is what "missed" stands for.
  await notify(TASKS_DUE_CHANNEL, 'while-down');
  proxy.refuseNew(false);
  await waitUntil(
    () =>
      due.heard.at(-1) === 'listening' && keys.heard.at(-1) === 'listening' ? true : undefined,
    'both listening again',
    20_000,
  );
  await notify(TASKS_DUE_CHANNEL, 'after');
  await waitUntil(() => (due.heard.at(-1) === 'notify after' ? true : undefined), 'the next one');
  for (const { heard } of [due, keys]) {
    // One or more losses (a refused reopen is one more), then "missed" before listening again.
    const firstLost = heard.indexOf('lost');
    const back = heard.lastIndexOf('missed');
    expect(heard.slice(0, firstLost)).toEqual(['listening']);
    expect(heard.slice(firstLost, back).every((entry) => entry === 'lost')).toBe(true);
    expect(heard[back + 1]).toBe('listening');
  }
  expect(due.heard).not.toContain('notify while-down');
  expect(due.heard.at(-1)).toBe('notify after');
  expect(await connections()).toBe(1);
  await stopDue();
  await stopKeys();
});

test('the migrated schema notifies only channels of the channel list', async () => {
  const rows = await database.db.query<{ src: string }>(
    `SELECT prosrc AS src FROM pg_proc WHERE prosrc LIKE '%pg_notify%'`,
  );
  const notified = new Set(
    rows.flatMap((row) => [...row.src.matchAll(/pg_notify\('([a-z_]+)'/g)].map((m) => m[1])),
  );
  expect(notified.size).toBeGreaterThan(0);
  for (const channel of notified) expect(CHANNELS).toContain(channel);
});

test('a silent connection (its server vanished): the liveness check finds it, and it reopens', async () => {
  const through = new URL(database.url);
  through.hostname = '127.0.0.1';
  through.port = String(proxy.port);
  const checked = new ListenConnection({
    url: through.toString(),
    appName: `${APP}-checked`,
    statementTimeoutMs: 1000,
  });
  const due = recorder();
  const stop = checked.subscribe(TASKS_DUE_CHANNEL, due);
  try {
    await waitUntil(() => (due.heard.includes('listening') ? true : undefined), 'listening');
    // No FIN, no RST, no error: only the check (its LISTEN again) going unanswered can tell.
    proxy.blackhole();
    await notify(TASKS_DUE_CHANNEL, 'while-silent');
    // Checked every second, each check answered within a second: lost within two, then reopened.
    await waitUntil(
      () => (due.heard.at(-1) === 'listening' && due.heard.includes('lost') ? true : undefined),
      'the silent connection found lost and reopened',
      5_000,
    );
    await notify(TASKS_DUE_CHANNEL, 'after');
    await waitUntil(() => (due.heard.at(-1) === 'notify after' ? true : undefined), 'the next one');
    expect(due.heard).toEqual(['listening', 'lost', 'missed', 'listening', 'notify after']);
  } finally {
    await stop();
  }
});
