// Guards against the OpenAPI document missing a route, an error, or a field of the task view.
import request from 'supertest';
import { apiKeyFor, useApi } from '../helpers/api';
import { TASK_DETAIL_FIELDS, TASK_SUMMARY_FIELDS } from '../helpers/task-fields';

const api = useApi({ catalog: [] });
type Headers = Record<string, { schema?: { example?: unknown } }>;
let doc: {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { headers?: Headers }>; security?: unknown[] }>
  >;
  components: {
    schemas: Record<string, { properties?: Record<string, unknown>; allOf?: unknown[] }>;
  };
};

beforeAll(async () => {
  doc = (await request(api.url).get('/openapi.json').expect(200)).body;
});

it('describes every route with its success and error answers', () => {
  const expected: Record<string, Record<string, string[]>> = {
    '/v1/toolsets': { get: ['200', '400', '401'] },
    '/v1/threads/{thread_id}/tasks': {
      post: ['201', '200', '400', '401', '413', '415', '422', '429'],
      get: ['200', '400', '401'],
    },
    '/v1/threads/{thread_id}/tasks/{task_id}': { get: ['200', '400', '401', '404'] },
    '/v1/threads/{thread_id}/tasks/{task_id}/retry': {
      post: ['201', '200', '400', '401', '404', '409', '422', '429'],
    },
    '/v1/tasks/{task_id}': { get: ['200', '400', '401', '404'] },
    '/v1/events': { get: ['200', '400', '401', '429'] },
    '/v1/threads/{thread_id}/tasks/{task_id}/cancel': { post: ['202', '400', '401', '404', '409'] },
    '/v1/threads/{thread_id}': { delete: ['204', '400', '401'] },
    '/v1/tasks': { get: ['200', '400', '401'] },
    '/v1/status': { get: ['200', '400', '401'] },
    '/healthz': { get: ['200', '400'] },
    '/healthz/live': { get: ['200', '400'] },
    '/healthz/ready': { get: ['200', '400', '503'] },
  };
  // Other routes (events, webhooks) are documented by their own issue's tests.
  expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(Object.keys(expected)));
  for (const [path, methods] of Object.entries(expected)) {
    for (const [method, statuses] of Object.entries(methods)) {
      expect({
        path,
        method,
        statuses: Object.keys(doc.paths[path][method].responses).sort(),
      }).toEqual({
        path,
        method,
        // Every operation answers 400 (a query parameter it does not take), 405 (another
        // method) and, but for the probes, 503 with Retry-After when the database cannot
        // serve it in time.
        statuses: [...statuses, '405', ...(path.startsWith('/healthz') ? [] : ['503'])].sort(),
      });
    }
  }
});

it('documents the task, its summary, the problem body and the toolset field by field', () => {
  const s = doc.components.schemas;
  const props = (name: string) => Object.keys(s[name].properties ?? {}).sort();
  expect(props('TaskSummaryDto')).toEqual(TASK_SUMMARY_FIELDS);
  expect(props('TaskDto')).toEqual(TASK_DETAIL_FIELDS);
  expect(props('ProblemDto')).toEqual([
    'detail',
    'errors',
    'quota',
    'retry_after_seconds',
    'status',
    'title',
    'type',
  ]);
  expect(props('ToolsetDto')).toEqual([
    'available',
    'contract',
    'description',
    'input_schema',
    'name',
    'unavailable_reason',
  ]);
  expect(props('SubmitTaskDto')).toEqual(['arguments', 'metadata', 'toolset']);
});

it('declares the response headers the API sends, and 405 with Allow on every operation', async () => {
  const headers = (path: string, method: string, status: string): string[] =>
    Object.keys(doc.paths[path][method].responses[status]?.headers ?? {}).sort();
  const submit = '/v1/threads/{thread_id}/tasks';
  expect(headers(submit, 'post', '201')).toEqual(['Location', 'Preference-Applied']);
  expect(headers(submit, 'post', '200')).toEqual(['Location', 'Preference-Applied']);
  expect(headers(submit, 'post', '429')).toEqual(['Retry-After']);
  expect(headers('/v1/webhooks', 'post', '201')).toEqual(['Location']);
  expect(headers('/v1/threads/{thread_id}/events', 'get', '429')).toEqual(['Retry-After']);
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      operations++;
      if (op.responses['401']) expect(headers(path, method, '401')).toContain('WWW-Authenticate');
      if (op.responses['429']) expect(headers(path, method, '429')).toContain('Retry-After');
      if (!path.startsWith('/healthz')) {
        expect({ path, method, unavailable: headers(path, method, '503') }).toEqual({
          path,
          method,
          unavailable: ['Retry-After'],
        });
      }
      expect({ path, method, allow: headers(path, method, '405') }).toEqual({
        path,
        method,
        allow: ['Allow'],
      });
    }
  }
  expect(operations).toBeGreaterThan(10);
  // The documented headers are what the API answers.
  const key = await apiKeyFor(api, 'openapi-reader');
  const allow = doc.paths[submit].post.responses['405'].headers?.Allow.schema?.example;
  const wrong = await request(api.url)
    .patch('/v1/threads/t/tasks')
    .set('Authorization', `Bearer ${key}`);
  expect(wrong.status).toBe(405);
  expect(wrong.headers.allow).toBe(allow);
  const anonymous = await request(api.url).get('/v1/tasks');
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers['www-authenticate']).toBe('Bearer');
});

it('serves a browsable page at /docs', async () => {
  const page = await request(api.url).get('/docs').expect(200);
  expect(page.headers['content-type']).toMatch(/text\/html/);
  // Its script comes from swagger-ui-dist's own folder (kept out of the API's bundle for that).
  const script = /src="\.?\/?((?:docs\/)?swagger-ui-bundle\.js)"/.exec(page.text)?.[1];
  expect(script).toBeDefined();
  const asset = await request(api.url)
    .get(`/docs/${script!.replace(/^docs\//, '')}`)
    .expect(200);
  expect(asset.headers['content-type']).toMatch(/javascript/);
  expect(asset.text.length).toBeGreaterThan(100_000);
});
