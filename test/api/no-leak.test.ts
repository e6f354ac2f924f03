// Guards against internal fields (remote IDs, sessions, servers, leases, workers, secrets)
// reaching any response, and against the task view drifting from the documented fields.
import request from 'supertest';
import {
  ApiHarness,
  JWT_SECRET,
  apiKeyFor,
  bearer,
  catalogEntry,
  publishCatalog,
  startApi,
} from './api-harness';
import { insertTaskRow } from './task-rows';

const DETAIL_FIELDS = [
  'task_id',
  'thread_id',
  'toolset',
  'status',
  'created_at',
  'updated_at',
  'submitted_at',
  'completed_at',
  'next_check_at',
  'cancel_requested',
  'tracking_degraded',
  'progress',
  'result',
  'result_preview',
  'result_truncated',
  'result_artifact',
  'input_required',
  'error',
  'last_error',
  'metadata',
].sort();
const SUMMARY_FIELDS = DETAIL_FIELDS.filter(
  (f) =>
    !['result', 'result_preview', 'result_truncated', 'result_artifact', 'input_required'].includes(
      f,
    ),
);

let api: ApiHarness;
let key: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
  api = await startApi();
  await publishCatalog(api, [
    catalogEntry(),
    catalogEntry({
      name: 'down',
      server: 'srv-hidden-down',
      available: false,
      unavailableReason: 'srv-hidden-down refused: ECONNREFUSED',
    }),
  ]);
  key = await apiKeyFor(api, 'alice');
  const db = api.db.db;
  const internal = (n: string) => ({
    remote_task_id: `rmt-${n}-4b1d`,
    remote_session_id: `sess-${n}-9f2c`,
    remote_protocol_version: '2099-01-01',
    driver_state: JSON.stringify({ cursor: `drv-${n}-77aa` }),
    pinned_worker_id: `pinned-${n}-5e5e`,
    request_hash: `hash-${n}-c0ffee`,
    idempotency_key: `idem-${n}`,
    input: JSON.stringify({ title: `input-${n}-a1a1` }),
  });
  ids.working = await insertTaskRow(db, {
    ...internal('w'),
    status: 'working',
    submitted_at: new Date(),
    consecutive_errors: 5,
    last_error: 'x'.repeat(600),
    progress: JSON.stringify({ current: 1, total: 3, message: 'step 1' }),
    lease_owner: 'worker-host-a-1234',
    lease_token: '6f1c2a9e-0d9b-4c37-9a44-0e1b2c3d4e5f',
    lease_expires_at: new Date(Date.now() + 60_000),
    metadata: JSON.stringify({ mine: true }),
  });
  ids.input = await insertTaskRow(db, {
    ...internal('i'),
    status: 'input_required',
    submitted_at: new Date(),
    input_required: JSON.stringify({ question: 'which region?' }),
  });
  ids.completed = await insertTaskRow(db, {
    ...internal('c'),
    status: 'completed',
    submitted_at: new Date(),
    result: JSON.stringify({ rows: 3 }),
    result_artifact: JSON.stringify({
      uri: 's3://bucket/report.pdf',
      mime_type: 'application/pdf',
    }),
  });
  ids.failed = await insertTaskRow(db, {
    ...internal('f'),
    status: 'failed',
    error_code: 'upstream_failed',
    error_message: 'e'.repeat(4000),
  });
  ids.queuedDown = await insertTaskRow(db, {
    ...internal('q'),
    toolset: 'down',
    server: 'srv-hidden-down',
  });
});
afterAll(async () => api?.close());

describe('task view', () => {
  it('shows exactly the documented fields, bounded', async () => {
    const get = (id: string) =>
      request(api.url)
        .get(`/v1/threads/thread-1/tasks/${id}`)
        .set('Authorization', bearer(key))
        .expect(200);
    const working = (await get(ids.working)).body;
    expect(Object.keys(working).sort()).toEqual(DETAIL_FIELDS);
    expect(working).toMatchObject({
      status: 'working',
      tracking_degraded: true,
      cancel_requested: false,
      progress: { current: 1, total: 3, message: 'step 1' },
      metadata: { mine: true },
      error: null,
    });
    expect(working.last_error).toHaveLength(600);
    const failed = (await get(ids.failed)).body;
    expect(failed.error.code).toBe('upstream_failed');
    expect(failed.error.message).toHaveLength(1000);
    expect(failed.next_check_at).toBeNull();
    expect((await get(ids.input)).body.input_required).toEqual({ question: 'which region?' });
    const completed = (await get(ids.completed)).body;
    expect(completed).toMatchObject({
      result: { rows: 3 },
      result_artifact: { uri: 's3://bucket/report.pdf' },
    });

    const list = await request(api.url)
      .get('/v1/tasks')
      .set('Authorization', bearer(key))
      .expect(200);
    expect(Object.keys(list.body).sort()).toEqual(['items', 'next_cursor']);
    for (const item of list.body.items) expect(Object.keys(item).sort()).toEqual(SUMMARY_FIELDS);
  });
});

describe('no leaks', () => {
  it('never answers with a remote ID, session, server, lease, worker, input, hash or secret', async () => {
    const rows = await api.db.db.query(`SELECT * FROM tasks`);
    const secrets = new Set<string>(
      [key, JWT_SECRET, api.db.url, new URL(api.db.url).password].filter(Boolean),
    );
    for (const row of rows) {
      for (const column of [
        'remote_task_id',
        'remote_session_id',
        'server',
        'lease_owner',
        'lease_token',
        'pinned_worker_id',
        'request_hash',
        'idempotency_key',
        'remote_protocol_version',
      ]) {
        if (typeof row[column] === 'string') secrets.add(row[column]);
      }
      if (row.driver_state) secrets.add(JSON.stringify(row.driver_state).slice(1, -1));
      const state = row.driver_state as { cursor?: string } | null;
      const input = row.input as { title?: string } | null;
      if (state?.cursor) secrets.add(state.cursor);
      if (input?.title) secrets.add(input.title);
    }
    for (const [hash] of await api.db.db
      .query(`SELECT key_hash FROM api_keys`)
      .then((r) => r.map((x) => [x.key_hash as string])))
      secrets.add(hash);
    expect(secrets.size).toBeGreaterThan(40);

    const auth = bearer(key);
    const paths = [
      '/v1/toolsets',
      '/v1/status',
      '/v1/tasks',
      '/v1/tasks?status=active',
      '/v1/tasks?status=terminal',
      '/v1/tasks?limit=1',
      '/v1/threads/thread-1/tasks',
      '/openapi.json',
      '/healthz/live',
      '/healthz/ready',
      ...Object.values(ids).map((id) => `/v1/threads/thread-1/tasks/${id}`),
    ];
    const bodies: string[] = [];
    for (const path of paths)
      bodies.push((await request(api.url).get(path).set('Authorization', auth)).text);
    bodies.push(
      (
        await request(api.url)
          .post(`/v1/threads/thread-1/tasks/${ids.working}/cancel`)
          .set('Authorization', auth)
          .expect(202)
      ).text,
    );
    bodies.push(
      (
        await request(api.url)
          .post(`/v1/threads/thread-1/tasks/${ids.completed}/cancel`)
          .set('Authorization', auth)
          .expect(409)
      ).text,
    );
    bodies.push(
      (
        await request(api.url)
          .post('/v1/threads/thread-1/tasks')
          .set('Authorization', auth)
          .send({ toolset: 'down', arguments: { title: 'x' } })
          .expect(201)
      ).text,
    );
    bodies.push(
      (
        await request(api.url)
          .post('/v1/threads/thread-1/tasks')
          .set('Authorization', auth)
          .send({ toolset: 'report', arguments: { title: 'x' } })
          .set('Idempotency-Key', 'idem-w')
          .expect(422)
      ).text,
    );
    bodies.push(
      (await request(api.url).get('/v1/tasks').set('Authorization', 'Bearer mtg_x')).text,
    );

    const joined = bodies.join('\n');
    expect(joined).toContain(ids.working); // the search looks at real answers
    for (const secret of secrets)
      expect({ secret, found: joined.includes(secret) }).toEqual({ secret, found: false });
    expect(joined).not.toMatch(/lease|remote_|session|worker_id|srv-/i);
  });
});

describe('cancel', () => {
  it('is 202 and idempotent while active, 202 again once cancelled as asked, 409 otherwise', async () => {
    const auth = bearer(key);
    const created = await request(api.url)
      .post('/v1/threads/c/tasks')
      .set('Authorization', auth)
      .send({ toolset: 'report', arguments: { title: 'x' } })
      .expect(201);
    const path = `/v1/threads/c/tasks/${created.body.task_id}/cancel`;
    const first = await request(api.url).post(path).set('Authorization', auth).expect(202);
    expect(first.body).toMatchObject({ status: 'cancelled', cancel_requested: true });
    await request(api.url).post(path).set('Authorization', auth).expect(202);
    const working = await insertTaskRow(api.db.db, {
      thread_id: 'c',
      status: 'working',
      submitted_at: new Date(),
    });
    const w1 = await request(api.url)
      .post(`/v1/threads/c/tasks/${working}/cancel`)
      .set('Authorization', auth)
      .expect(202);
    expect(w1.body).toMatchObject({ status: 'working', cancel_requested: true });
    await request(api.url)
      .post(`/v1/threads/c/tasks/${working}/cancel`)
      .set('Authorization', auth)
      .expect(202);
    const done = await request(api.url)
      .post(`/v1/threads/thread-1/tasks/${ids.failed}/cancel`)
      .set('Authorization', auth)
      .expect(409);
    expect(done.body.detail).toBe('The task is already failed.');
  });
});
