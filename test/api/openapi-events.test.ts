// Guards against the OpenAPI document missing or misdescribing the events and webhooks routes: their paths, methods, success schemas and problem+json errors, checked against real answers.
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { WebhookRepository } from '@app/persistence';
import { insertTasks } from '../helpers/tasks';
import { waitUntil } from '../helpers/wait';
import { SseClient } from '../helpers/sse';
import { apiKeyFor, bearer, useApi } from '../helpers/api';

interface Operation {
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: { $ref?: string } }> }
  >;
  security?: Array<Record<string, unknown>>;
  parameters?: Array<{ name: string; in: string; schema?: Record<string, unknown> }>;
}
type Schema = Record<string, unknown> & { properties?: Record<string, unknown> };
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const USER = 'oa-user';
const THREAD = 'oa-thread';
const PROBLEM = 'application/problem+json';

const api = useApi({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, catalog: [] });
let doc: OpenApiDoc;
let auth: string;
let ajv: Ajv;
const sse: SseClient[] = [];

beforeAll(async () => {
  doc = (await request(api.url).get('/openapi.json').expect(200)).body as OpenApiDoc;
  auth = bearer(await apiKeyFor(api, USER));
  // Named schemas are closed: a real answer with an undocumented field fails validation.
  const schemas: Record<string, Schema> = {};
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    const read = readNullableRefs(schema) as Schema;
    schemas[name] = read.properties ? { additionalProperties: false, ...read } : read;
  }
  ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: { schemas } });
});

// After the API's own afterAll has stopped it.
afterAll(() => {
  for (const client of sse) client.close();
});

/**
 * `{nullable: true, allOf: [{$ref}]}` (how @nestjs/swagger writes a nullable nested DTO, e.g. the
 * task's `error`) read as "null or the referenced schema", as code generators read it. By the
 * letter of OpenAPI 3.0.3, nullable without a sibling `type` would not admit null.
 */
function readNullableRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(readNullableRefs);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = readNullableRefs(value);
  if (out.nullable === true && Array.isArray(out.allOf)) {
    const { nullable: _nullable, type: _type, ...rest } = out;
    return { anyOf: [{ type: 'null' }, rest] };
  }
  return out;
}

function validator(ref: string): ValidateFunction {
  return ajv.compile({ $ref: `openapi${ref}` });
}

function operation(path: string, method: string): Operation {
  const op = doc.paths[path]?.[method];
  if (!op) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return op;
}

/** The body answered with `status` matches the schema the document gives for it. */
function expectDocumented(
  path: string,
  method: string,
  res: { status: number; headers: Record<string, string>; body: unknown },
): void {
  const documented = operation(path, method).responses[String(res.status)];
  expect({ path, method, status: res.status, documented: documented !== undefined }).toEqual({
    path,
    method,
    status: res.status,
    documented: true,
  });
  const type = (res.headers['content-type'] ?? '').split(';')[0];
  const ref = documented.content?.[type]?.schema?.$ref;
  expect({ path, method, status: res.status, type, ref }).toEqual({
    path,
    method,
    status: res.status,
    type,
    ref: expect.stringMatching(/^#\/components\/schemas\//),
  });
  const validate = validator(ref!);
  expect({
    path,
    method,
    status: res.status,
    errors: validate(res.body) ? null : validate.errors,
  }).toEqual({ path, method, status: res.status, errors: null });
}

const SUCCESS: Record<string, Record<string, [string, string, string | null]>> = {
  '/v1/threads/{thread_id}/events': { get: ['200', 'text/event-stream', 'TaskEventDto'] },
  '/v1/webhooks': {
    post: ['201', 'application/json', 'CreatedWebhookDto'],
    get: ['200', 'application/json', 'WebhookListDto'],
  },
  '/v1/webhooks/{id}': { delete: ['204', '', null] },
  '/v1/webhooks/{id}/deliveries': { get: ['200', 'application/json', 'WebhookAttemptListDto'] },
};
// 400 (a query parameter the route does not take), 405 (another method) and 503 (the database
// could not serve it in time) on every operation.
const ERRORS: Record<string, Record<string, string[]>> = {
  '/v1/threads/{thread_id}/events': { get: ['400', '401', '405', '429', '503'] },
  '/v1/webhooks': {
    post: ['400', '401', '405', '413', '415', '422', '503'],
    get: ['400', '401', '405', '503'],
  },
  '/v1/webhooks/{id}': { delete: ['400', '401', '404', '405', '503'] },
  '/v1/webhooks/{id}/deliveries': { get: ['400', '401', '404', '405', '503'] },
};

describe('the document', () => {
  it.each(
    Object.entries(SUCCESS).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => [method.toUpperCase(), path] as const),
    ),
  )('describes %s %s with its success and problem+json errors', (METHOD, path) => {
    const method = METHOD.toLowerCase();
    const op = operation(path, method);
    const [status, type, schema] = SUCCESS[path][method];
    expect(Object.keys(op.responses).sort()).toEqual([status, ...ERRORS[path][method]].sort());
    expect(op.security).toEqual([{ bearer: [] }]);
    if (schema) {
      expect(op.responses[status].content?.[type]?.schema?.$ref).toBe(
        `#/components/schemas/${schema}`,
      );
    } else {
      expect(op.responses[status].content).toBeUndefined();
    }
    for (const error of ERRORS[path][method]) {
      expect(op.responses[error].content).toEqual({
        [PROBLEM]: { schema: { $ref: '#/components/schemas/ProblemDto' } },
      });
      expect(op.responses[error].description.length).toBeGreaterThan(0);
    }
    for (const param of op.parameters ?? []) {
      // Every parameter has a type (an empty schema documents nothing).
      expect({ param: param.name, type: param.schema?.type }).toEqual({
        param: param.name,
        type: expect.any(String),
      });
    }
  });

  it('describes the event shape field by field, the summary being the task summary', () => {
    const event = doc.components.schemas.TaskEventDto;
    expect(Object.keys(event.properties ?? {}).sort()).toEqual(
      ['created_at', 'data', 'id', 'sequence', 'task', 'type'].sort(),
    );
    expect(event.properties?.type).toMatchObject({
      enum: [
        'task.working',
        'task.input_required',
        'task.progress',
        'task.completed',
        'task.failed',
        'task.cancelled',
      ],
    });
    expect(JSON.stringify(event.properties?.task)).toContain('#/components/schemas/TaskSummaryDto');
  });

  it("says a webhook's 422 is about its body, not a toolset", () => {
    const described = operation('/v1/webhooks', 'post').responses['422'].description;
    expect(described).toMatch(/URL/);
    expect(described).not.toMatch(/toolset/);
  });
});

describe('real answers match the document', () => {
  let webhookId: string;

  it('for creating, listing and reading the deliveries of a webhook', async () => {
    const created = await request(api.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url: 'http://127.0.0.1:9/hook', description: 'doc check' });
    expectDocumented('/v1/webhooks', 'post', created);
    webhookId = created.body.id as string;
    expect(created.headers.location).toBe(`/v1/webhooks/${webhookId}`);

    const listed = await request(api.url).get('/v1/webhooks').set('Authorization', auth);
    expectDocumented('/v1/webhooks', 'get', listed);
    expect(listed.body.items).toHaveLength(1);

    // One task goes working → completed (as a poller would write it); its events fan out to
    // the subscription, and one delivery attempt is recorded the way the poller records it.
    const [taskId] = await insertTasks(api.db.db, 1, { userId: USER, threadId: THREAD });
    await api.db.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [taskId]);
    await api.db.db.query(
      `UPDATE tasks SET status = 'completed', completed_at = now()
        WHERE id = $1`,
      [taskId],
    );
    const hooks = new WebhookRepository(api.db.db);
    const claimed = await hooks.claim('doc-check', 10, 60_000, 15_000);
    expect(claimed.length).toBe(2);
    for (const delivery of claimed) {
      await hooks.finishAttempt(delivery, {
        status: 'delivered',
        outcome: 'ok',
        statusCode: 204,
        durationMs: 12,
        error: null,
      });
    }
    const deliveries = await request(api.url)
      .get(`/v1/webhooks/${webhookId}/deliveries`)
      .set('Authorization', auth);
    expectDocumented('/v1/webhooks/{id}/deliveries', 'get', deliveries);
    expect(deliveries.body.items).toHaveLength(2);
  });

  it('for the event stream: each `data:` is a documented event', async () => {
    const client = await SseClient.open(`${api.url}/v1/threads/${THREAD}/events`, auth.slice(7));
    sse.push(client);
    expect(client.res.statusCode).toBe(200);
    expect(client.res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = await waitUntil(
      () => (client.events.length >= 2 ? client.events : undefined),
      'two events on the stream',
    );
    const ref = operation('/v1/threads/{thread_id}/events', 'get').responses['200'].content?.[
      'text/event-stream'
    ]?.schema?.$ref;
    const validate = validator(ref!);
    for (const event of events) {
      expect({ id: event.id, errors: validate(event.data) ? null : validate.errors }).toEqual({
        id: event.id,
        errors: null,
      });
      expect(event.event).toBe(event.data.type);
    }
    client.close();
  });

  it('for deleting a webhook', async () => {
    const res = await request(api.url)
      .delete(`/v1/webhooks/${webhookId}`)
      .set('Authorization', auth);
    expect(res.status).toBe(204);
    expect(operation('/v1/webhooks/{id}', 'delete').responses['204']).toBeDefined();
  });

  const unknownId = 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa';
  const cases: Array<{
    name: string;
    path: string;
    method: 'get' | 'post' | 'delete';
    url: string;
    auth?: false;
    body?: string;
    contentType?: string;
    lastEventId?: string;
    status: number;
  }> = [
    {
      name: 'no token',
      path: '/v1/webhooks',
      method: 'get',
      url: '/v1/webhooks',
      auth: false,
      status: 401,
    },
    {
      name: 'no token',
      path: '/v1/webhooks',
      method: 'post',
      url: '/v1/webhooks',
      auth: false,
      body: '{}',
      status: 401,
    },
    {
      name: 'bad JSON',
      path: '/v1/webhooks',
      method: 'post',
      url: '/v1/webhooks',
      body: '{"url":',
      status: 400,
    },
    {
      name: 'not JSON',
      path: '/v1/webhooks',
      method: 'post',
      url: '/v1/webhooks',
      body: 'url=x',
      contentType: 'text/plain',
      status: 415,
    },
    {
      name: 'over 1 MiB',
      path: '/v1/webhooks',
      method: 'post',
      url: '/v1/webhooks',
      body: JSON.stringify({ url: 'https://example.com', description: 'x'.repeat(1_100_000) }),
      status: 413,
    },
    {
      name: 'an ftp URL',
      path: '/v1/webhooks',
      method: 'post',
      url: '/v1/webhooks',
      body: JSON.stringify({ url: 'ftp://example.com/hook' }),
      status: 422,
    },
    {
      name: 'a malformed ID',
      path: '/v1/webhooks/{id}',
      method: 'delete',
      url: '/v1/webhooks/nope',
      status: 400,
    },
    {
      name: 'an unknown ID',
      path: '/v1/webhooks/{id}',
      method: 'delete',
      url: `/v1/webhooks/${unknownId}`,
      status: 404,
    },
    {
      name: 'no token',
      path: '/v1/webhooks/{id}',
      method: 'delete',
      url: `/v1/webhooks/${unknownId}`,
      auth: false,
      status: 401,
    },
    {
      name: 'a bad limit',
      path: '/v1/webhooks/{id}/deliveries',
      method: 'get',
      url: `/v1/webhooks/${unknownId}/deliveries?limit=0`,
      status: 400,
    },
    {
      name: 'an unknown ID',
      path: '/v1/webhooks/{id}/deliveries',
      method: 'get',
      url: `/v1/webhooks/${unknownId}/deliveries`,
      status: 404,
    },
    {
      name: 'no token',
      path: '/v1/webhooks/{id}/deliveries',
      method: 'get',
      url: `/v1/webhooks/${unknownId}/deliveries`,
      auth: false,
      status: 401,
    },
    {
      name: 'a bad Last-Event-ID',
      path: '/v1/threads/{thread_id}/events',
      method: 'get',
      url: `/v1/threads/${THREAD}/events`,
      lastEventId: 'not-an-event',
      status: 400,
    },
    {
      name: 'a bad thread ID',
      path: '/v1/threads/{thread_id}/events',
      method: 'get',
      url: '/v1/threads/bad%20thread/events',
      status: 400,
    },
    {
      name: 'no token',
      path: '/v1/threads/{thread_id}/events',
      method: 'get',
      url: `/v1/threads/${THREAD}/events`,
      auth: false,
      status: 401,
    },
  ];

  it.each(cases.map((c) => [c.method.toUpperCase(), c.url, c.name, c] as const))(
    'for %s %s with %s',
    async (_m, _u, _n, c) => {
      let req = request(api.url)[c.method](c.url);
      if (c.auth !== false) req = req.set('Authorization', auth);
      if (c.lastEventId) req = req.set('Last-Event-ID', c.lastEventId);
      if (c.body !== undefined) req = req.set('Content-Type', c.contentType ?? 'application/json');
      const res = await (c.body !== undefined ? req.send(c.body) : req);
      expect(res.status).toBe(c.status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expectDocumented(c.path, c.method, res);
    },
  );
});
