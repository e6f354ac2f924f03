// Guards against internal fields (remote IDs, sessions, servers, leases, workers, secrets) and
// operator error text reaching any response, SSE stream or webhook (real failures of every error
// code, driven through a real poller and the demo server), and against the task view drifting
// from the documented fields.
import request from 'supertest';
import { ERROR_TEMPLATES } from '@app/views';
import { SseClient } from '../helpers/sse';
import { WebhookReceiver } from '../events/webhook-receiver';
import { useFleet } from '../helpers/fleet';
import { demoServerEntry } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { ApiProcess, JWT_SECRET, apiKeyFor, bearer, catalogEntry, useApi } from '../helpers/api';
import { TASK_DETAIL_FIELDS, TASK_SUMMARY_FIELDS } from '../helpers/task-fields';
import { insertTaskRow } from './task-rows';

const api = useApi({
  catalog: [
    catalogEntry(),
    catalogEntry({
      name: 'down',
      server: 'srv-hidden-down',
      available: false,
      unavailableReason: 'srv-hidden-down refused: ECONNREFUSED',
    }),
  ],
});
let key: string;
const ids: Record<string, string> = {};

beforeAll(async () => {
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
    input_required: JSON.stringify({
      requests: { region: { method: 'elicitation/create', params: { message: 'which region?' } } },
      answerable: false,
    }),
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

describe('task view', () => {
  it('shows exactly the documented fields, bounded', async () => {
    const get = (id: string) =>
      request(api.url)
        .get(`/v1/threads/thread-1/tasks/${id}`)
        .set('Authorization', bearer(key))
        .expect(200);
    const working = (await get(ids.working)).body;
    expect(Object.keys(working).sort()).toEqual(TASK_DETAIL_FIELDS);
    expect(working).toMatchObject({
      status: 'working',
      tracking_degraded: true,
      cancel_requested: false,
      progress: { current: 1, total: 3, message: 'step 1' },
      metadata: { mine: true },
      error: null,
    });
    expect(working.last_error).toBe(
      "The upstream server answered with an error while the gateway was checking the task's status; the gateway retries with backoff.",
    );
    const failed = (await get(ids.failed)).body;
    expect(failed.error.code).toBe('upstream_failed');
    expect(failed.error.message).toHaveLength(1000);
    expect(failed.next_check_at).toBeNull();
    // The one shape, and nothing the gateway keeps for itself (answerable).
    expect((await get(ids.input)).body.input_required).toEqual({
      requests: { region: { method: 'elicitation/create', params: { message: 'which region?' } } },
    });
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
    for (const item of list.body.items)
      expect(Object.keys(item).sort()).toEqual(TASK_SUMMARY_FIELDS);
  });
});

describe('no leaks', () => {
  it('never answers with a remote ID, session, server, lease, worker, input, hash or secret', async () => {
    const rows = await api.db.db.query(`SELECT * FROM task_rows`);
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
    // The OpenAPI document describes the system (operator routes speak of leases): data only.
    const data = bodies.filter((b) => !b.startsWith('{"openapi"')).join('\n');
    expect(data).not.toMatch(/lease|remote_|session|worker_id|srv-/i);
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

describe('real failures of every error code', () => {
  const SERVER = 'leak-srv-alpha';
  const WORKER = 'leak-worker-omega';
  const TOOLSET = 'leaky';
  const DOWN_SERVER = 'leak-srv-down';
  const DOWN_TOOLSET = 'leaky-down';
  const THREAD = 'leaks';
  // A database of its own, where the seeded rows above are not in a real poller's way.
  const fleet = useFleet();
  let live: ApiProcess;
  let liveKey: string;
  let receiver: WebhookReceiver;
  let sse: SseClient;
  let demoUrl: string;

  beforeAll(async () => {
    live = await fleet.api({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    liveKey = await apiKeyFor({ db: fleet.database }, 'carol');
    receiver = new WebhookReceiver();
    await receiver.start();
    const demo = await fleet.demo();
    demoUrl = demo.url;
    await fleet.poller(
      {
        [SERVER]: demoServerEntry(demo.url, TOOLSET),
        // Nothing listens there: its catalog reason quotes the address, for operators only.
        [DOWN_SERVER]: demoServerEntry('http://127.0.0.1:9', DOWN_TOOLSET),
      },
      {
        workerId: WORKER,
        env: { TRACKING_TIMEOUT_MS: '5000', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      },
    );
    await waitUntil(async () => {
      const res = await request(live.url).get('/v1/toolsets').set('Authorization', bearer(liveKey));
      const entry = (res.body.items as Array<{ name: string; available: boolean }>)?.find(
        (t) => t.name === TOOLSET,
      );
      return entry?.available ? true : undefined;
    }, 'the poller to publish its catalog');
  }, 60_000);
  // After the fleet's own afterAll: its poller, demo server and API have stopped by then.
  afterAll(async () => {
    sse?.close();
    await receiver?.stop();
  });

  it('shows each code its fixed text, and no internal name, ID, address or path anywhere', async () => {
    const auth = bearer(liveKey);
    const hook = await request(live.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: `${receiver.base}/leaks` })
      .expect(201);
    receiver.route('/leaks', hook.body.secret as string, 204);
    sse = await SseClient.open(`${live.url}/v1/threads/${THREAD}/events`, liveKey);
    expect(sse.res.statusCode).toBe(200);

    const submit = async (args: Record<string, unknown>): Promise<string> => {
      const res = await request(live.url)
        .post(`/v1/threads/${THREAD}/tasks`)
        .set('Authorization', auth)
        .send({ toolset: TOOLSET, arguments: args })
        .expect(201);
      return res.body.task_id as string;
    };
    const ids = {
      submit_rejected: await submit({
        fault: 'error_submit',
        fault_detail: 'quota exceeded; see /opt/leak/quota.py on 10.9.8.7:8443',
      }),
      protocol_error: await submit({ fault: 'wrong_task_id', duration_ms: 60_000 }),
      upstream_failed: await submit({
        duration_ms: 200,
        outcome: 'fail',
        fail_message: 'render crashed reading /var/lib/leak/data.db',
      }),
      upstream_task_lost: await submit({ fault: 'task_not_found', duration_ms: 60_000 }),
      outcome_uncertain: await submit({ fault: 'hang_submit' }),
      tracking_timeout: await submit({
        fault: 'error_status',
        fault_detail: 'status backend http://10.9.8.7:9000/jobs unreachable',
        duration_ms: 60_000,
      }),
      cancel_retry: await submit({
        fault: 'error_cancel',
        fault_detail: 'cancel refused by /srv/leak/cancel.sh',
        duration_ms: 60_000,
      }),
    };
    const get = async (id: string): Promise<request.Response> =>
      request(live.url).get(`/v1/threads/${THREAD}/tasks/${id}`).set('Authorization', auth);
    const bodies: string[] = [];

    // Transient errors while polling and while cancelling: seen live, before any timeout.
    const polling = await waitUntil(async () => {
      const res = await get(ids.tracking_timeout);
      return res.body.status === 'working' && res.body.last_error ? res : undefined;
    }, 'a transient status error');
    bodies.push(polling.text);
    expect(polling.body.last_error).toBe(
      "The upstream server answered with an error while the gateway was checking the task's status; the gateway retries with backoff.",
    );
    await waitUntil(
      async () => ((await get(ids.cancel_retry)).body.status === 'working' ? true : undefined),
      'the cancel victim to be working',
    );
    await request(live.url)
      .post(`/v1/threads/${THREAD}/tasks/${ids.cancel_retry}/cancel`)
      .set('Authorization', auth)
      .expect(202);
    const cancelling = await waitUntil(async () => {
      const res = await get(ids.cancel_retry);
      return res.body.last_error?.includes('cancelling') ? res : undefined;
    }, 'a transient cancel error');
    bodies.push(cancelling.text);

    // Every task ends with its code and that code's fixed text.
    const expected = { ...ids } as Record<string, string>;
    delete expected.cancel_retry;
    for (const [code, id] of Object.entries(expected)) {
      const res = await waitUntil(
        async () => {
          const r = await get(id);
          return r.body.status === 'failed' ? r : undefined;
        },
        `${code} to fail`,
        30_000,
        200,
      );
      bodies.push(res.text);
      expect(res.body.error.code).toBe(code);
      const template = ERROR_TEMPLATES[code as keyof typeof ERROR_TEMPLATES];
      if (code === 'tracking_timeout') expect(res.body.error.message).toMatch(/for \d+ s\.$/);
      else expect(res.body.error.message.slice(0, 30)).toBe(template.slice(0, 30));
    }
    const rejected = (await get(ids.submit_rejected)).body as { error: { message: string } };
    expect(rejected.error.message).toBe(
      'The upstream server refused the task: quota exceeded; see [redacted] on [redacted]',
    );

    // The catalog says why a toolset is down without the address it could not reach.
    const catalog = await waitUntil(async () => {
      const res = await request(live.url).get('/v1/toolsets').set('Authorization', auth);
      const down = (
        res.body.items as Array<{ name: string; unavailable_reason: string | null }>
      ).find((t) => t.name === DOWN_TOOLSET);
      return down?.unavailable_reason ? res : undefined;
    }, 'the unreachable toolset to be shown unavailable');
    bodies.push(catalog.text);
    const waiting = await request(live.url)
      .post(`/v1/threads/${THREAD}/tasks`)
      .set('Authorization', auth)
      .send({ toolset: DOWN_TOOLSET, arguments: {} })
      .expect(201);
    bodies.push(waiting.text);

    // Every terminal event reached the webhook and the stream.
    const terminal = Object.keys(expected).length;
    const failedIn = (texts: string[]) => texts.filter((t) => t.includes('"task.failed"')).length;
    await waitUntil(
      () => (failedIn(receiver.at('/leaks').map((r) => r.body)) >= terminal ? true : undefined),
      'the webhooks of every failure',
      30_000,
    );
    await waitUntil(
      () => (failedIn(sse.events.map((e) => JSON.stringify(e))) >= terminal ? true : undefined),
      'the SSE events of every failure',
      30_000,
    );
    bodies.push(...receiver.at('/leaks').map((r) => r.body));
    bodies.push(...sse.events.map((e) => JSON.stringify(e)));
    bodies.push(
      (await request(live.url).get(`/v1/threads/${THREAD}/tasks`).set('Authorization', auth)).text,
    );

    const rows = await fleet.db.query<Record<string, string | null>>(
      `SELECT remote_task_id, error_message, last_error FROM tasks`,
    );
    const remoteIds = rows.map((r) => r.remote_task_id).filter((v): v is string => !!v);
    expect(remoteIds.length).toBeGreaterThanOrEqual(4);
    // The operator's copy keeps the full text.
    expect(rows.some((r) => r.error_message?.includes('/var/lib/leak/data.db'))).toBe(true);
    const forbidden = [
      ...remoteIds,
      SERVER,
      DOWN_SERVER,
      WORKER,
      demoUrl,
      new URL(demoUrl).host,
      '127.0.0.1',
      '10.9.8.7',
      '/opt/leak',
      '/var/lib/leak',
      '/srv/leak',
      'job_',
    ];
    const joined = bodies.join('\n');
    expect(joined).toContain(ids.upstream_failed);
    for (const secret of forbidden)
      expect({ secret, found: joined.includes(secret) }).toEqual({ secret, found: false });
  }, 120_000);
});
