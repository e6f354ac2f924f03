// Guards webhook delivery against each receiver behaviour (2xx, 500, timeout, redirect, 410) and against requests to private addresses, at creation and at delivery time.
import { Database, WebhookRepository } from '@app/persistence';
import {
  DNS_TIMEOUT_MS,
  REFUSED_HOST_MESSAGE,
  checkDestination,
  DeliveryWorkerOptions,
  newWebhookSecret,
  parseWebhookUrl,
  WebhookDeliveryWorker,
} from '@app/webhooks';
import { publicEventId } from '@app/views';
import type { GatewayMetrics } from '@app/metrics';
import { adminQuery, createTestDatabase, TestDatabase } from '../helpers/db';
import { waitUntil } from '../helpers/wait';
import { insertTasks } from '../helpers/tasks';
import { WebhookReceiver } from './webhook-receiver';

let db: TestDatabase;
let receiver: WebhookReceiver;
let hooks: WebhookRepository;
const workers: WebhookDeliveryWorker[] = [];
const counts = new Map<string, number>();
const fakeMetrics = {
  webhookDeliveries: { inc: (l: { outcome: string }) => bump(l.outcome) },
  webhookDeliveryDuration: { observe: () => undefined },
  webhookDeadLetters: { inc: () => bump('dead_letters_total') },
  claims: { inc: () => undefined },
  claimedRows: { inc: () => undefined },
} as unknown as GatewayMetrics;

function bump(key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

const QUIET = { info: () => undefined, warn: () => undefined };
const OPTIONS: DeliveryWorkerOptions = {
  workerId: 'w-test',
  slots: 8,
  leaseMs: 5000,
  deadWorkerAfterMs: 15_000,
  timeoutMs: 400,
  // Fast retries inside a short window, so dead-lettering happens within the test.
  retry: { baseMs: 100, maxMs: 300, windowMs: 2000, jitter: 0.2 },
  allowPrivateNetworks: true,
  fallbackIntervalMs: 50,
  trackingDegradedAfter: 3,
};

function startWorker(overrides: Partial<DeliveryWorkerOptions> = {}): WebhookDeliveryWorker {
  const worker = new WebhookDeliveryWorker(hooks, { ...OPTIONS, ...overrides }, QUIET, fakeMetrics);
  worker.start();
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  db = await createTestDatabase();
  hooks = new WebhookRepository(db.db);
  receiver = new WebhookReceiver();
  await receiver.start();
});

afterAll(async () => {
  for (const worker of workers) await worker.stop(1000);
  await receiver.stop();
  await db.drop();
});

/** A user with one subscription to `path` answering `answer`; returns the subscription ID. */
async function subscribe(user: string, path: string, answer: number | 'hang'): Promise<string> {
  const secret = newWebhookSecret();
  const url = receiver.route(path, secret, answer);
  await hooks.create({ id: `wh_${user}`, userId: user, url, description: null, secret });
  return `wh_${user}`;
}

/** One task of `user` that goes working → completed: two events. */
async function runTask(database: Database, user: string): Promise<string> {
  const [id] = await insertTasks(database, 1, { userId: user, threadId: 'th' });
  await database.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [id]);
  await database.query(
    `UPDATE tasks SET status = 'completed', completed_at = now() WHERE id = $1`,
    [id],
  );
  return id;
}

async function deliveries(sub: string): Promise<Array<{ status: string; attempts: number }>> {
  return db.db.query(
    `SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY id`,
    [sub],
  );
}

async function attempts(sub: string): Promise<Array<Record<string, unknown>>> {
  return hooks.recentAttempts(sub, 100) as unknown as Promise<Array<Record<string, unknown>>>;
}

async function allFinished(sub: string): Promise<true | undefined> {
  const rows = await deliveries(sub);
  return rows.length > 0 && rows.every((r) => r.status !== 'pending') ? true : undefined;
}

describe('with a worker allowed to reach 127.0.0.1', () => {
  let worker: WebhookDeliveryWorker;
  beforeAll(() => {
    worker = startWorker();
  });
  // The strict worker below must be the only one claiming.
  afterAll(() => worker.stop(1000));

  it('delivers each event once to a 2xx receiver, signed and in the documented shape', async () => {
    const sub = await subscribe('u-ok', '/ok', 204);
    const taskId = await runTask(db.db, 'u-ok');
    await waitUntil(() => allFinished(sub), 'deliveries to finish', 10_000);
    expect(await deliveries(sub)).toEqual([
      { status: 'delivered', attempts: 1 },
      { status: 'delivered', attempts: 1 },
    ]);
    const got = receiver.at('/ok');
    expect(got.every((r) => r.verified)).toBe(true);
    const bodies = got.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies.map((b) => b.type).sort()).toEqual(['task.completed', 'task.working']);
    const completed = bodies.find((b) => b.type === 'task.completed') as Record<string, unknown>;
    expect(Object.keys(completed).sort()).toEqual([
      'created_at',
      'data',
      'id',
      'sequence',
      'task',
      'type',
    ]);
    expect(completed).toMatchObject({
      sequence: 2,
      data: { previous_status: 'working' },
      task: { task_id: taskId, status: 'completed', thread_id: 'th', next_check_at: null },
    });
    // Opaque, stable event IDs: from the task and its per-task sequence, no global counter.
    expect(got.map((r) => r.headers['webhook-id']).sort()).toEqual(
      [publicEventId(taskId, 1), publicEventId(taskId, 2)].sort(),
    );
    expect(completed.id).toBe(publicEventId(taskId, 2));
    expect(JSON.stringify(bodies)).not.toMatch(/server|lease|remote|secret|whsec_/);
    const [last] = await attempts(sub);
    expect(last).toMatchObject({ outcome: 'ok', statusCode: 204, deadLettered: false });
  });

  it('retries a 500 with backoff, then dead-letters it and says so', async () => {
    const sub = await subscribe('u-500', '/fail', 500);
    await runTask(db.db, 'u-500');
    await waitUntil(() => allFinished(sub), 'dead letters', 15_000);
    const rows = await deliveries(sub);
    expect(rows.every((r) => r.status === 'dead' && r.attempts >= 2)).toBe(true);
    const log = await attempts(sub);
    expect(log.every((a) => a.statusCode === 500 && a.error === 'receiver answered 500')).toBe(
      true,
    );
    expect(log.filter((a) => a.deadLettered)).toHaveLength(2);
    expect(log.filter((a) => !a.deadLettered).every((a) => a.nextRetryAt instanceof Date)).toBe(
      true,
    );
    // The same message, resent: receivers dedup on webhook-id.
    const ids = receiver.at('/fail').map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
    expect(ids.length).toBe(log.length);
    expect(counts.get('dead_letters_total')).toBeGreaterThanOrEqual(2);
  });

  it('gives up on a receiver that does not answer within the timeout, and retries', async () => {
    const sub = await subscribe('u-hang', '/hang', 'hang');
    await runTask(db.db, 'u-hang');
    await waitUntil(() => allFinished(sub), 'timeouts to dead-letter', 15_000);
    const log = await attempts(sub);
    expect(log.length).toBeGreaterThanOrEqual(4);
    for (const a of log) {
      expect(a).toMatchObject({ statusCode: null, error: 'timed out after 400 ms' });
      expect(a.durationMs).toBeGreaterThanOrEqual(390);
    }
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const sub = await subscribe('u-302', '/moved', 302);
    receiver.route('/redirected', 'unused', 200);
    await runTask(db.db, 'u-302');
    await waitUntil(() => allFinished(sub), 'redirect failures to dead-letter', 15_000);
    const log = await attempts(sub);
    expect(
      log.every((a) => a.statusCode === 302 && a.error === 'redirect (302) not followed'),
    ).toBe(true);
    expect(receiver.at('/redirected')).toHaveLength(0);
  });

  it('disables the subscription on a 410 and sends it nothing more', async () => {
    const sub = await subscribe('u-410', '/gone', 410);
    await runTask(db.db, 'u-410');
    await waitUntil(() => allFinished(sub), 'the 410 to be recorded', 10_000);
    const [row] = await db.db.query(
      `SELECT disabled_at, disabled_reason FROM webhook_subscriptions WHERE id = $1`,
      [sub],
    );
    expect(row.disabled_at).toBeInstanceOf(Date);
    expect(row.disabled_reason).toMatch(/410/);
    const statuses = (await deliveries(sub)).map((d) => d.status);
    expect(statuses).toContain('disabled');
    expect(statuses.every((s) => s === 'disabled' || s === 'skipped')).toBe(true);
    const before = receiver.at('/gone').length;
    await runTask(db.db, 'u-410');
    expect(await deliveries(sub)).toHaveLength(2);
    expect(receiver.at('/gone')).toHaveLength(before);
    expect(before).toBeLessThanOrEqual(2);
  });
});

describe('without WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  const policy = { allowPrivateNetworks: false };

  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.8/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fd00::1]/hook',
    'https://[64:ff9b:1::a9fe:a9fe]/hook',
    'https://[::ffff:0:a9fe:a9fe]/hook',
    'https://localhost/hook',
  ])('refuses %s at creation', async (url) => {
    await expect(checkDestination(parseWebhookUrl(url, policy), policy)).rejects.toMatchObject({
      problem: 'forbidden',
    });
  });

  it('refuses plain http and credentials, accepts them only where allowed', () => {
    expect(() => parseWebhookUrl('http://example.com/h', policy)).toThrow('must use https');
    expect(() => parseWebhookUrl('https://u:p@example.com/h', policy)).toThrow('credentials');
    expect(parseWebhookUrl('http://example.com/h', { allowPrivateNetworks: true }).protocol).toBe(
      'http:',
    );
  });

  it('refuses a host that resolved to a public address at creation and to a private one at delivery', async () => {
    const publicDns = async () => [{ address: '93.184.216.34', family: 4 }];
    const url = parseWebhookUrl('https://hooks.example.test/h', policy);
    await expect(checkDestination(url, { ...policy, resolver: publicDns })).resolves.toMatchObject({
      address: '93.184.216.34',
    });
    // Stored as created; at delivery the name resolves (for real) to loopback: `localhost`.
    const secret = newWebhookSecret();
    receiver.route('/rebound', secret, 200);
    const port = new URL(receiver.base).port;
    await hooks.create({
      id: 'wh_u-rebind',
      userId: 'u-rebind',
      url: `https://localhost:${port}/rebound`,
      description: null,
      secret,
    });
    startWorker({ allowPrivateNetworks: false, workerId: 'w-strict' });
    await runTask(db.db, 'u-rebind');
    await waitUntil(() => allFinished('wh_u-rebind'), 'the refusal to be recorded', 10_000);
    expect((await deliveries('wh_u-rebind')).map((d) => d.status)).toEqual(['dead', 'dead']);
    const log = await attempts('wh_u-rebind');
    expect(log.every((a) => String(a.error) === `refused: ${REFUSED_HOST_MESSAGE}`)).toBe(true);
    expect(log.every((a) => a.deadLettered === true)).toBe(true);
    expect(receiver.at('/rebound')).toHaveLength(0);
  });

  it('gives one refusal for a host that resolves inward and for one that does not resolve', async () => {
    const inward = async () => [{ address: '10.0.0.9', family: 4 }];
    const missing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const url = parseWebhookUrl('https://db.internal.test/h', policy);
    const refusals = await Promise.all(
      [inward, missing].map((resolver) =>
        checkDestination(url, { ...policy, resolver }).then(
          () => 'accepted',
          (error: Error) => error.message,
        ),
      ),
    );
    expect(refusals).toEqual([REFUSED_HOST_MESSAGE, REFUSED_HOST_MESSAGE]);
  });

  it('gives up on a resolver that does not answer', async () => {
    const hung = () => new Promise<never>(() => undefined);
    const url = parseWebhookUrl('https://slow.example.test/h', policy);
    const started = Date.now();
    await expect(checkDestination(url, { ...policy, resolver: hung })).rejects.toMatchObject({
      problem: 'unresolvable',
    });
    expect(Date.now() - started).toBeLessThan(DNS_TIMEOUT_MS + 2000);
  });

  it('stops delivering to an http hook once private networks are no longer allowed', async () => {
    const secret = newWebhookSecret();
    receiver.route('/plain', secret, 200);
    for (const worker of workers) await worker.stop(1000); // this one must be the only claimer
    await hooks.create({
      id: 'wh_u-plain',
      userId: 'u-plain',
      // http, made while private networks were allowed
      url: `http://hooks.example.test:${new URL(receiver.base).port}/plain`,
      description: null,
      secret,
    });
    startWorker({
      allowPrivateNetworks: false,
      workerId: 'w-strict-http',
      // Judge the scheme alone: the host counts as public here.
      resolver: async () => [{ address: '93.184.216.34', family: 4 }],
    });
    await runTask(db.db, 'u-plain');
    await waitUntil(() => allFinished('wh_u-plain'), 'the refusal to be recorded', 10_000);
    expect((await deliveries('wh_u-plain')).map((d) => d.status)).toEqual(['dead', 'dead']);
    const log = await attempts('wh_u-plain');
    expect(log.every((a) => String(a.error) === 'refused: must use https')).toBe(true);
    expect(receiver.at('/plain')).toHaveLength(0);
  });
});

describe('while the database is unreachable', () => {
  /** Runs `sql` on the server's admin database (not the test's own). */
  const admin = (sql: string): Promise<void> =>
    adminQuery(process.env.TEST_ADMIN_DATABASE_URL!, sql);

  it('counts an attempt it cannot write as unrecorded, not lease_lost, and sends it again', async () => {
    for (const worker of workers) await worker.stop(1000); // this one must be the only claimer
    const appName = 'webhook-outage-worker';
    const own = Database.connect({ url: db.url, poolSize: 2, appName });
    const worker = new WebhookDeliveryWorker(
      new WebhookRepository(own),
      { ...OPTIONS, workerId: 'w-outage', leaseMs: 1000, timeoutMs: 60_000 },
      QUIET,
      fakeMetrics,
    );
    worker.start();
    const name = new URL(db.url).pathname.slice(1);
    const before = {
      unrecorded: counts.get('unrecorded') ?? 0,
      lost: counts.get('lease_lost') ?? 0,
    };
    try {
      const sub = await subscribe('u-outage', '/outage', 'hang');
      await runTask(db.db, 'u-outage');
      await waitUntil(() => (receiver.at('/outage').length === 2 ? true : undefined), 'two sends');
      // Postgres goes away while both attempts are in flight: their writes fail.
      await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      try {
        await admin(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = '${name}' AND application_name = '${appName}'`,
        );
        expect(receiver.release('/outage', 204)).toBe(2);
        await waitUntil(
          () => ((counts.get('unrecorded') ?? 0) - before.unrecorded === 2 ? true : undefined),
          'both attempts to be counted unrecorded',
        );
      } finally {
        await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      }
      expect((counts.get('lease_lost') ?? 0) - before.lost).toBe(0);
      // Nothing was written: once the leases end, both are sent again and recorded.
      receiver.route('/outage', receiver.secretOf('/outage'), 204);
      await waitUntil(() => allFinished(sub), 'the deliveries to be sent again', 30_000);
      expect((await deliveries(sub)).map((d) => d.status)).toEqual(['delivered', 'delivered']);
      expect(receiver.at('/outage').length).toBeGreaterThanOrEqual(4);
    } finally {
      await worker.stop(1000);
      await own.close();
    }
  });
});
