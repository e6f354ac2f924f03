// Guards the SSE stream (resume without loss or repeats, several replicas, one user's events only, a strict 2026-07-28 upstream's task streamed and delivered) and the webhook subscription API (secret once, owner only, private URLs refused).
import request from 'supertest';
import { WebhookRepository } from '@app/persistence';
import { newWebhookSecret } from '@app/webhooks';
import { waitUntil } from '../helpers/wait';
import { insertTasks } from '../helpers/tasks';
import { ApiProcess, signJwt } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { SseClient } from '../helpers/sse';
import { demoTasksEntry } from '../helpers/processes';
import { WebhookReceiver } from './webhook-receiver';

const fleet = useFleet();
let strict: ApiProcess;
let relaxed: ApiProcess;
const clients: SseClient[] = [];
const alice = signJwt('alice');
const bob = signJwt('bob');

beforeAll(async () => {
  // Two replicas of one deployment on one database; they differ only in the operator switch,
  // so one run covers both the refusal and local receivers.
  [strict, relaxed] = await Promise.all([
    fleet.api(),
    fleet.api({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }),
  ]);
});

afterAll(() => {
  for (const client of clients) client.close();
});

async function open(replica: ApiProcess, token: string, thread: string, last?: string) {
  const client = await SseClient.open(`${replica.url}/v1/threads/${thread}/events`, token, last);
  clients.push(client);
  expect(client.res.statusCode).toBe(200);
  expect(client.res.headers['content-type']).toMatch(/^text\/event-stream/);
  return client;
}

/** Moves each task working → completed, one statement per change, as pollers would. */
async function drive(ids: string[]): Promise<void> {
  for (const id of ids) {
    await fleet.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [id]);
    await fleet.db.query(
      `UPDATE tasks SET status = 'completed', completed_at = now() WHERE id = $1`,
      [id],
    );
  }
}

const key = (e: { data: Record<string, unknown> }): string =>
  `${(e.data.task as { task_id: string }).task_id}#${String(e.data.sequence)}`;

it('resumes on another replica with Last-Event-ID: nothing missed, nothing twice', async () => {
  const ids = await insertTasks(fleet.db, 60, { userId: 'alice', threadId: 'chat-1' });
  const first = await open(strict, alice, 'chat-1');
  const watcher = await open(relaxed, alice, 'chat-1');
  const driving = drive(ids);
  await waitUntil(async () => (first.events.length >= 30 ? true : undefined), '30 events', 20_000);
  first.close();
  const resumeFrom = first.lastId as string;
  const received = [...first.events];
  // Reconnect to the other replica while changes keep landing.
  const second = await open(relaxed, alice, 'chat-1', resumeFrom);
  await driving;
  await waitUntil(
    async () => (received.length + second.events.length >= 120 ? true : undefined),
    'all 120 events after the resume',
    20_000,
  );
  const all = [...received, ...second.events];
  expect(all).toHaveLength(120);
  expect(new Set(all.map(key)).size).toBe(120);
  expect(new Set(all.map((e) => e.id)).size).toBe(120);
  // Per task, the sequence increases along the stream.
  const seen = new Map<string, number>();
  for (const e of all) {
    const task = (e.data.task as { task_id: string }).task_id;
    expect(e.data.sequence).toBe((seen.get(task) ?? 0) + 1);
    seen.set(task, e.data.sequence as number);
    expect(e.event).toBe(e.data.type);
  }
  // The other replica's uninterrupted stream saw the very same events in the same order.
  await waitUntil(
    async () => (watcher.events.length >= 120 ? true : undefined),
    'the watcher to see all 120 events',
    20_000,
  );
  expect(watcher.events.map((e) => e.id)).toEqual(all.map((e) => e.id));
  expect(first.comments).toContain('connected');
  // Stream positions and event IDs are opaque: no outbox ID, transaction ID or global counter.
  const counters = await fleet.db.query<{ id: string; tx: string }>(
    `SELECT id::text AS id, tx::text AS tx FROM task_events WHERE user_id = 'alice'`,
  );
  for (const e of all) {
    expect(e.id).not.toMatch(/^\d+-\d+$/);
    expect(e.data.id).not.toMatch(/^evt_\d+$/);
    expect(e.data.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
  }
  const shown = JSON.stringify(all.map((e) => [e.id, e.data.id]));
  for (const c of counters.slice(0, 20)) {
    expect(shown).not.toContain(`"evt_${c.id}"`);
    expect(shown).not.toContain(`${c.tx}-${c.id}`);
  }
});

it('shows a user only their own events, even on the same thread ID', async () => {
  const bobStream = await open(strict, bob, 'chat-1');
  const [aliceTask] = await insertTasks(fleet.db, 1, { userId: 'alice', threadId: 'chat-1' });
  const [bobTask] = await insertTasks(fleet.db, 1, { userId: 'bob', threadId: 'chat-1' });
  await drive([aliceTask, bobTask]);
  await waitUntil(
    async () => (bobStream.events.length >= 2 ? true : undefined),
    "bob's two events",
    20_000,
  );
  // Alice's change committed before Bob's, so had it leaked it would already be here.
  expect(bobStream.events.map((e) => (e.data.task as { task_id: string }).task_id)).toEqual([
    bobTask,
    bobTask,
  ]);
});

it('rejects a malformed Last-Event-ID and requires a token', async () => {
  await request(strict.url)
    .get('/v1/threads/chat-1/events')
    .set('Authorization', `Bearer ${alice}`)
    .set('Last-Event-ID', 'nope')
    .expect(400);
  // An opaque id of an event that does not exist (or expired) is a 400 too, not a 500 or a
  // silent restart.
  await request(strict.url)
    .get('/v1/threads/chat-1/events')
    .set('Authorization', `Bearer ${alice}`)
    .set('Last-Event-ID', Buffer.from('task_nosuchtask:3').toString('base64url'))
    .expect(400);
  await request(strict.url).get('/v1/threads/chat-1/events').expect(401);
});

describe('webhook subscriptions', () => {
  it('refuses a private destination unless the operator allows it', async () => {
    for (const url of ['https://127.0.0.1/h', 'https://localhost/h', 'http://127.0.0.1:9/h']) {
      const res = await request(strict.url)
        .post('/v1/webhooks')
        .set('Authorization', `Bearer ${alice}`)
        .send({ url })
        .expect(422);
      expect(res.body.errors[0].path).toBe('/url');
    }
    await request(relaxed.url)
      .post('/v1/webhooks')
      .set('Authorization', `Bearer ${alice}`)
      .send({ url: 'http://127.0.0.1:9/h' })
      .expect(201);
  });

  it("shows the secret once and never another user's subscription", async () => {
    const created = await request(relaxed.url)
      .post('/v1/webhooks')
      .set('Authorization', `Bearer ${alice}`)
      .send({ url: 'http://127.0.0.1:9/hook', description: 'ci' })
      .expect(201);
    const { id, secret } = created.body as { id: string; secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.headers.location).toBe(`/v1/webhooks/${id}`);
    const mine = await request(strict.url)
      .get('/v1/webhooks')
      .set('Authorization', `Bearer ${alice}`)
      .expect(200);
    expect(mine.body.items.map((w: { id: string }) => w.id)).toContain(id);
    expect(JSON.stringify(mine.body)).not.toContain(secret.slice(6));
    expect(JSON.stringify(mine.body)).not.toMatch(/secret/);

    const theirs = await request(strict.url)
      .get('/v1/webhooks')
      .set('Authorization', `Bearer ${bob}`)
      .expect(200);
    expect(theirs.body.items).toEqual([]);
    await request(strict.url)
      .get(`/v1/webhooks/${id}/deliveries`)
      .set('Authorization', `Bearer ${bob}`)
      .expect(404);
    await request(strict.url)
      .delete(`/v1/webhooks/${id}`)
      .set('Authorization', `Bearer ${bob}`)
      .expect(404);

    const attempts = await request(strict.url)
      .get(`/v1/webhooks/${id}/deliveries`)
      .set('Authorization', `Bearer ${alice}`)
      .expect(200);
    expect(attempts.body).toEqual({ items: [] });
    await request(strict.url)
      .delete(`/v1/webhooks/${id}`)
      .set('Authorization', `Bearer ${alice}`)
      .expect(204);
    await request(strict.url)
      .delete(`/v1/webhooks/${id}`)
      .set('Authorization', `Bearer ${alice}`)
      .expect(404);
  });

  it('checks the quota before any lookup, and refuses inward and unknown hosts alike', async () => {
    const hooks = new WebhookRepository(fleet.db);
    for (let i = 0; i < 10; i++)
      await hooks.create({
        id: `wh_quota${i}`,
        userId: 'quota-user',
        url: 'https://93.184.216.34/h',
        description: null,
        secret: newWebhookSecret(),
      });
    const full = await request(strict.url)
      .post('/v1/webhooks')
      .set('Authorization', `Bearer ${signJwt('quota-user')}`)
      .send({ url: 'https://10.0.0.1/h' })
      .expect(422);
    expect(full.body.detail).toBe('At most 10 webhooks per user.');

    const answers = [];
    for (const url of ['https://localhost/h', 'https://no-such-host.invalid/h']) {
      const res = await request(strict.url)
        .post('/v1/webhooks')
        .set('Authorization', `Bearer ${alice}`)
        .send({ url })
        .expect(422);
      answers.push({ detail: res.body.detail, errors: res.body.errors });
    }
    expect(answers[0]).toEqual(answers[1]);
  });
});

describe('a task on a strict 2026-07-28 server', () => {
  const sara = signJwt('sara', { exp: Math.floor(Date.now() / 1000) + 600 });
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // --strict-2026 refuses initialize (-32020): every status comes from the stateless side.
    const demo = await fleet.demo(['--strict-2026']);
    receiver = new WebhookReceiver();
    await receiver.start();
    // Unpinned: the poller finds the era through server/discover.
    await fleet.poller(
      { strict: demoTasksEntry(demo.url, { asks: 'demo_ask_one' }) },
      { env: { LEASE_MS: '8000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } },
    );
    await waitUntil(
      async () => {
        const res = await request(strict.url)
          .get('/v1/toolsets')
          .set('Authorization', `Bearer ${sara}`);
        const items = res.body.items as Array<{ name: string; available: boolean }>;
        return items.some((t) => t.name === 'asks' && t.available) ? true : undefined;
      },
      'the strict toolset available',
      10_000,
    );
  });
  // Its poller and demo server stop with the fleet, after the file (this block is its last).
  afterAll(() => receiver?.stop());

  it('streams and delivers working → input_required → working → completed, signed', async () => {
    const hook = await request(relaxed.url)
      .post('/v1/webhooks')
      .set('Authorization', `Bearer ${sara}`)
      .send({ url: `${receiver.base}/strict` })
      .expect(201);
    receiver.route('/strict', hook.body.secret as string, 204);
    const stream = await open(strict, sara, 'chat-strict');
    const submitted = await request(relaxed.url)
      .post('/v1/threads/chat-strict/tasks')
      .set('Authorization', `Bearer ${sara}`)
      // Working long enough after the answer that the poller sees it working again.
      .send({ toolset: 'asks', arguments: { resume_ms: 5000 } })
      .expect(201);
    const taskId = submitted.body.task_id as string;
    const statusEvents = () => stream.events.filter((e) => e.event !== 'task.progress');
    await waitUntil(
      () => (statusEvents().some((e) => e.event === 'task.input_required') ? true : undefined),
      'task.input_required on the stream',
      20_000,
    );
    await request(strict.url)
      .post(`/v1/threads/chat-strict/tasks/${taskId}/input`)
      .set('Authorization', `Bearer ${sara}`)
      .send({ responses: { confirm: { action: 'accept', content: { confirm: true } } } })
      .expect(202);
    await waitUntil(
      () => (statusEvents().some((e) => e.event === 'task.completed') ? true : undefined),
      'task.completed on the stream',
      20_000,
    );
    const STATUSES = ['working', 'input_required', 'working', 'completed'];
    expect(
      statusEvents().map((e) => [e.event, (e.data.task as { status: string }).status]),
    ).toEqual(STATUSES.map((s) => [`task.${s}`, s]));
    expect(
      stream.events.every((e) => (e.data.task as { task_id: string }).task_id === taskId),
    ).toBe(true);
    // The webhook gets the same events, each signed with the subscription's secret.
    const wanted = stream.events.map((e) => e.data.id as string).sort();
    await waitUntil(
      () => (receiver.at('/strict').length >= wanted.length ? true : undefined),
      'every event delivered',
      20_000,
    );
    const got = receiver.at('/strict');
    expect(got.every((r) => r.verified)).toBe(true);
    expect(got.map((r) => r.headers['webhook-id'] as string).sort()).toEqual(wanted);
    // Neither way shows the upstream's task ID.
    const [{ remote }] = await fleet.db.query<{ remote: string }>(
      `SELECT remote_task_id AS remote FROM task_rows WHERE id = $1`,
      [taskId],
    );
    expect(remote).toEqual(expect.any(String));
    const shown = JSON.stringify([stream.events, got.map((r) => r.body)]);
    expect(shown).not.toContain(remote);
    const completed = await request(strict.url)
      .get(`/v1/threads/chat-strict/tasks/${taskId}`)
      .set('Authorization', `Bearer ${sara}`)
      .expect(200);
    expect(completed.body.result.structuredContent.answers).toEqual({
      confirm: { action: 'accept', content: { confirm: true } },
    });
  });
});
