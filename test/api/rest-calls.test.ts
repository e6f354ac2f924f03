// Guards against the REST calls a client expects going missing or leaking across users: a task by
// ID without its thread, the list across threads and its filters, the event stream of every
// thread (resumable), the retry of a failed task (linked, under the quotas, 409 otherwise),
// Prefer: wait holding until the task ends or asks a question, GET /healthz naming the version;
// another user's task is a 404 on every one of them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { QuotaRepository } from '@app/persistence';
import { apiKeyFor, bearer, useApi } from '../helpers/api';
import { SseClient } from '../helpers/sse';
import { waitUntil } from '../helpers/wait';
import { insertTaskRow } from './task-rows';

const api = useApi();
let alice: string;
let bob: string;

beforeAll(async () => {
  alice = await apiKeyFor(api, 'alice');
  bob = await apiKeyFor(api, 'bob');
});

const get = (path: string, key = alice) =>
  request(api.url).get(path).set('Authorization', bearer(key));
const post = (path: string, key = alice) =>
  request(api.url).post(path).set('Authorization', bearer(key));

it('GET /healthz names the version of package.json, without a token', async () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const res = await request(api.url).get('/healthz').expect(200);
  expect(res.body).toEqual({ status: 'ok', version: pkg.version });
});

it('GET /v1/tasks/{task_id} finds the caller’s task in any thread; another user’s is a 404', async () => {
  const id = await insertTaskRow(api.db.db, { thread_id: 'elsewhere', input: '{"title":"a"}' });
  const mine = await get(`/v1/tasks/${id}`).expect(200);
  expect(mine.body).toMatchObject({ task_id: id, thread_id: 'elsewhere', retry_of: null });
  const theirs = await get(`/v1/tasks/${id}`, bob).expect(404);
  expect(theirs.body.type).toMatch(/\/not-found$/);
  await get('/v1/tasks/task_aaaaaaaaaaaaaaaaaaaaaaaaaa').expect(404);
});

it('GET /v1/tasks filters by status, toolset, thread and creation time, pages with the same filters', async () => {
  const created = (at: string) => new Date(at);
  const ids = {
    old: await insertTaskRow(api.db.db, {
      user_id: 'carol',
      thread_id: 'f1',
      created_at: created('2026-01-01T00:00:00Z'),
    }),
    failed: await insertTaskRow(api.db.db, {
      user_id: 'carol',
      thread_id: 'f1',
      status: 'failed',
      error_code: 'upstream_failed',
      created_at: created('2026-02-01T00:00:00Z'),
    }),
    other: await insertTaskRow(api.db.db, {
      user_id: 'carol',
      thread_id: 'f2',
      toolset: 'other',
      created_at: created('2026-03-01T00:00:00Z'),
    }),
    late: await insertTaskRow(api.db.db, {
      user_id: 'carol',
      thread_id: 'f2',
      created_at: created('2026-04-01T00:00:00Z'),
    }),
  };
  await insertTaskRow(api.db.db, { user_id: 'dave', thread_id: 'f1' });
  const carol = await apiKeyFor(api, 'carol');
  const list = async (query: string): Promise<string[]> =>
    ((await get(`/v1/tasks?${query}`, carol).expect(200)).body.items as { task_id: string }[]).map(
      (t) => t.task_id,
    );
  expect(await list('')).toEqual([ids.late, ids.other, ids.failed, ids.old]);
  expect(await list('status=failed')).toEqual([ids.failed]);
  expect(await list('toolset=other')).toEqual([ids.other]);
  expect(await list('thread_id=f1')).toEqual([ids.failed, ids.old]);
  expect(
    await list('created_after=2026-01-15T00:00:00Z&created_before=2026-03-15T00:00:00%2B00:00'),
  ).toEqual([ids.other, ids.failed]);
  expect(await list('thread_id=f2&toolset=report')).toEqual([ids.late]);
  // The same cursor paging, filters carried along.
  const first = await get('/v1/tasks?thread_id=f1&limit=1', carol).expect(200);
  expect(first.body.items.map((t: { task_id: string }) => t.task_id)).toEqual([ids.failed]);
  const second = await get(
    `/v1/tasks?thread_id=f1&limit=1&cursor=${first.body.next_cursor as string}`,
    carol,
  ).expect(200);
  expect(second.body.items.map((t: { task_id: string }) => t.task_id)).toEqual([ids.old]);
  expect(second.body.next_cursor).toBeNull();
});

it('POST …/retry submits a failed task again, linked by retry_of; 409 unless failed; 404 for another user', async () => {
  const failed = await insertTaskRow(api.db.db, {
    thread_id: 'r1',
    status: 'failed',
    input: '{"title":"again","pages":2}',
    metadata: '{"ticket":"OPS-9"}',
    error_code: 'upstream_failed',
  });
  await post(`/v1/threads/r1/tasks/${failed}/retry`, bob).expect(404);
  await post(`/v1/threads/other/tasks/${failed}/retry`).expect(404);
  const res = await post(`/v1/threads/r1/tasks/${failed}/retry`)
    .set('Idempotency-Key', 'retry-1')
    .expect(201);
  expect(res.body).toMatchObject({
    thread_id: 'r1',
    toolset: 'report',
    status: 'queued',
    metadata: { ticket: 'OPS-9' },
    retry_of: failed,
  });
  expect(res.headers.location).toBe(`/v1/threads/r1/tasks/${res.body.task_id as string}`);
  const [row] = await api.db.db.query<{ input: unknown; retry_of: string }>(
    `SELECT input, retry_of FROM tasks WHERE id = $1`,
    [res.body.task_id],
  );
  expect(row).toEqual({ input: { title: 'again', pages: 2 }, retry_of: failed });
  // The same request again answers the same new task.
  const again = await post(`/v1/threads/r1/tasks/${failed}/retry`)
    .set('Idempotency-Key', 'retry-1')
    .expect(200);
  expect(again.body.task_id).toBe(res.body.task_id);
  expect((await get(`/v1/tasks/${res.body.task_id as string}`).expect(200)).body.retry_of).toBe(
    failed,
  );
  // Not failed: 409, its own type.
  const refused = await post(`/v1/threads/r1/tasks/${res.body.task_id as string}/retry`).expect(
    409,
  );
  expect(refused.body).toMatchObject({ type: expect.stringMatching(/\/not-retryable$/) as string });
});

it('a retry is a submit under the caller’s quotas: refused 429 with nothing written', async () => {
  const failed = await insertTaskRow(api.db.db, {
    user_id: 'erin',
    thread_id: 'q',
    status: 'failed',
    error_code: 'upstream_failed',
    input: '{"title":"q"}',
  });
  const erin = await apiKeyFor(api, 'erin');
  await new QuotaRepository(api.db.db).set('erin', { maxActiveTasks: 1 });
  await insertTaskRow(api.db.db, { user_id: 'erin', thread_id: 'q' }); // one active already
  const res = await post(`/v1/threads/q/tasks/${failed}/retry`, erin).expect(429);
  expect(res.body).toMatchObject({ quota: 'active_tasks' });
  expect(res.body.type).toMatch(/\/quota-exceeded$/);
  const linked = await api.db.db.query(`SELECT 1 FROM tasks WHERE retry_of = $1`, [failed]);
  expect(linked).toHaveLength(0);
});

it('Prefer: wait holds past working until the task asks a question, and says so', async () => {
  const submitted = post('/v1/threads/w1/tasks')
    .set('Prefer', 'wait=20')
    .send({ toolset: 'report', arguments: { title: 'w' } })
    .then((res) => res);
  const id = await waitUntil(async () => {
    const [row] = await api.db.db.query<{ id: string }>(
      `SELECT id FROM tasks WHERE user_id = 'alice' AND thread_id = 'w1'`,
    );
    return row?.id;
  }, 'the held submit to be stored');
  await api.db.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [id]);
  // Still held while working: the answer comes only once the task asks its question.
  const [{ updated }] = await api.db.db.query<{ updated: Date }>(
    `UPDATE tasks SET status = 'input_required',
            input_required = '{"requests":{"go":{"method":"elicitation/create","params":{"message":"Go?"}}}}'
      WHERE id = $1 RETURNING now() AS updated`,
    [id],
  );
  const res = await submitted;
  expect(res.status).toBe(201);
  expect(res.headers['preference-applied']).toBe('wait=20');
  expect(res.body.status).toBe('input_required');
  expect(Date.now()).toBeGreaterThanOrEqual(updated.getTime());
});

it('Prefer: wait answers a task that ends, and caps the wait at 30 s', async () => {
  const submitted = post('/v1/threads/w2/tasks')
    .set('Prefer', 'wait=600')
    .send({ toolset: 'report', arguments: { title: 'w' } })
    .then((res) => res);
  const id = await waitUntil(async () => {
    const [row] = await api.db.db.query<{ id: string }>(
      `SELECT id FROM tasks WHERE user_id = 'alice' AND thread_id = 'w2'`,
    );
    return row?.id;
  }, 'the held submit to be stored');
  await api.db.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [id]);
  await api.db.db.query(
    `UPDATE tasks SET status = 'completed', completed_at = now(), result = '{"ok":true}' WHERE id = $1`,
    [id],
  );
  const res = await submitted;
  expect(res.headers['preference-applied']).toBe('wait=30');
  expect(res.body).toMatchObject({ status: 'completed', result: { ok: true } });
});

it('GET /v1/events streams every thread of the caller, resumes after Last-Event-ID, never another user’s', async () => {
  const frank = await apiKeyFor(api, 'frank');
  const a = await insertTaskRow(api.db.db, { user_id: 'frank', thread_id: 'e1' });
  const b = await insertTaskRow(api.db.db, { user_id: 'frank', thread_id: 'e2' });
  const other = await insertTaskRow(api.db.db, { user_id: 'gina', thread_id: 'e1' });
  for (const id of [a, b, other])
    await api.db.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [id]);
  const first = await SseClient.open(`${api.url}/v1/events`, frank);
  try {
    expect(first.res.statusCode).toBe(200);
    await waitUntil(() => (first.events.length >= 2 ? true : undefined), 'both threads’ events');
    expect(
      first.events.map((e) => [e.event, (e.data.task as { task_id: string }).task_id]),
    ).toEqual([
      ['task.working', a],
      ['task.working', b],
    ]);
  } finally {
    first.close();
  }
  const resumeAfter = first.events[0].id;
  await api.db.db.query(
    `UPDATE tasks SET status = 'completed', completed_at = now() WHERE id = $1`,
    [a],
  );
  const resumed = await SseClient.open(`${api.url}/v1/events`, frank, resumeAfter);
  try {
    await waitUntil(() => (resumed.events.length >= 2 ? true : undefined), 'the resumed stream');
    expect(
      resumed.events.map((e) => [e.event, (e.data.task as { task_id: string }).task_id]),
    ).toEqual([
      ['task.working', b],
      ['task.completed', a],
    ]);
    expect(resumed.events.some((e) => (e.data.task as { task_id: string }).task_id === other)).toBe(
      false,
    );
  } finally {
    resumed.close();
  }
  // Another user's event ID is no position in this user's stream.
  const gina = await SseClient.open(
    `${api.url}/v1/events`,
    await apiKeyFor(api, 'gina'),
    resumeAfter,
  );
  gina.close();
  expect(gina.res.statusCode).toBe(400);
});
