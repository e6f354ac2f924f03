// Guards against bad requests answered with the wrong status, a non-problem body, or a 500.
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';
import request from 'supertest';
import { apiKeyFor, bearer, signJwt, useApi } from '../helpers/api';
import { ApiKeyRepository } from '@app/persistence';

const PROBLEM = 'https://mcp-task-gateway.dev/problems/';

interface Case {
  name: string;
  method: 'get' | 'post' | 'put' | 'delete' | 'patch';
  path: string;
  /** Authorization header; undefined = none; 'KEY' = a valid key of alice. */
  auth?: string;
  contentType?: string;
  body?: string;
  headers?: Record<string, string>;
  status: number;
  slug: string;
  detail?: string | RegExp;
  errors?: { path: string; message?: string | RegExp }[];
  responseHeaders?: Record<string, string | RegExp>;
  /**
   * Send only the headers, announcing a body of this many bytes that never comes: the answer
   * must arrive without the server reading the body (and no write can race the server's close).
   */
  announcedBodyBytes?: number;
}

const api = useApi();
let key: string;
let revoked: string;
const task = 'task_aaaaaaaaaaaaaaaaaaaaaaaaaa';

beforeAll(async () => {
  key = await apiKeyFor(api, 'alice');
  const keys = new ApiKeyRepository(api.db.db);
  const made = await keys.create('alice', 'old');
  await keys.revoke(made.info.id);
  revoked = made.key;
});

const json = (value: unknown): string => JSON.stringify(value);
const submit = (body: unknown): Pick<Case, 'method' | 'path' | 'contentType' | 'body'> => ({
  method: 'post',
  path: '/v1/threads/t1/tasks',
  contentType: 'application/json',
  body: json(body),
});
const auth401 = { status: 401, slug: 'unauthorized', detail: 'A valid bearer token is required.' };

function cases(): Case[] {
  const now = Math.floor(Date.now() / 1000);
  return [
    {
      name: 'missing token',
      method: 'get',
      path: '/v1/tasks',
      ...auth401,
      responseHeaders: { 'www-authenticate': 'Bearer' },
    },
    {
      name: 'Basic scheme',
      method: 'get',
      path: '/v1/tasks',
      auth: 'Basic YWxpY2U6cHc=',
      ...auth401,
    },
    {
      name: 'garbage token',
      method: 'get',
      path: '/v1/tasks',
      auth: 'Bearer not.a.jwt',
      ...auth401,
    },
    {
      name: 'expired JWT',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', { exp: now - 60 })),
      ...auth401,
    },
    {
      name: 'JWT not yet valid',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', { nbf: now + 120 })),
      ...auth401,
    },
    {
      name: 'JWT wrong audience',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', { aud: 'someone-else' })),
      ...auth401,
    },
    {
      name: 'JWT wrong issuer',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', { iss: 'https://evil.test' })),
      ...auth401,
    },
    {
      name: 'JWT wrong signature',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', {}, 'x'.repeat(40))),
      ...auth401,
    },
    {
      name: 'JWT without sub',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt(undefined)),
      ...auth401,
    },
    {
      name: 'JWT without exp',
      method: 'get',
      path: '/v1/tasks',
      auth: bearer(signJwt('alice', { exp: undefined })),
      ...auth401,
    },
    {
      name: 'unknown API key',
      method: 'get',
      path: '/v1/tasks',
      auth: 'Bearer mtg_nosuchkeyatall',
      ...auth401,
    },
    { name: 'revoked API key', method: 'get', path: '/v1/tasks', auth: 'REVOKED', ...auth401 },
    {
      name: 'token checked before parameters',
      method: 'get',
      path: '/v1/threads/bad id/tasks',
      ...auth401,
    },
    {
      name: 'bad thread ID',
      method: 'get',
      path: '/v1/threads/bad%20id/tasks',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      detail: 'Invalid thread ID.',
      errors: [{ path: 'thread_id' }],
    },
    {
      name: 'thread ID too long',
      method: 'get',
      path: `/v1/threads/${'a'.repeat(129)}/tasks`,
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'thread_id' }],
    },
    {
      name: 'bad task ID',
      method: 'get',
      path: '/v1/threads/t1/tasks/task_UPPER',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      detail: 'Invalid task ID.',
      errors: [{ path: 'task_id' }],
    },
    {
      name: 'unknown task',
      method: 'get',
      path: `/v1/threads/t1/tasks/${task}`,
      auth: 'KEY',
      status: 404,
      slug: 'not-found',
      detail: 'No such task.',
    },
    {
      name: 'cancel of an unknown task',
      method: 'post',
      path: `/v1/threads/t1/tasks/${task}/cancel`,
      auth: 'KEY',
      status: 404,
      slug: 'not-found',
    },
    {
      name: 'unknown toolset',
      ...submit({ toolset: 'nope', arguments: {} }),
      auth: 'KEY',
      status: 422,
      slug: 'unknown-toolset',
      detail: 'Unknown toolset.',
      errors: [{ path: '/toolset' }],
    },
    {
      name: 'arguments failing the schema',
      ...submit({ toolset: 'report', arguments: { pages: 0, colour: 'red' } }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      detail: "The arguments do not match the toolset's input schema.",
      errors: [
        { path: '/arguments/title', message: 'is required' },
        { path: '/arguments/colour', message: 'is not allowed' },
        { path: '/arguments/pages', message: 'must be >= 1' },
      ],
    },
    {
      name: 'wrong argument type',
      ...submit({ toolset: 'report', arguments: { title: 7 } }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '/arguments/title', message: 'must be string' }],
    },
    {
      name: 'body is an array',
      ...submit([1, 2]),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '' }],
    },
    {
      name: 'missing fields and an unknown one',
      ...submit({ tolset: 'report' }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '/tolset' }, { path: '/toolset' }, { path: '/arguments' }],
    },
    {
      name: 'metadata over 4 KiB',
      ...submit({
        toolset: 'report',
        arguments: { title: 't' },
        metadata: { x: 'y'.repeat(4100) },
      }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '/metadata' }],
    },
    {
      name: 'metadata not an object',
      ...submit({ toolset: 'report', arguments: { title: 't' }, metadata: [1] }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '/metadata', message: 'must be an object' }],
    },
    {
      name: 'nesting too deep',
      ...submit({
        toolset: 'report',
        arguments: { title: 't', deep: JSON.parse('['.repeat(200) + ']'.repeat(200)) },
      }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: `/arguments/deep${'/0'.repeat(62)}`, message: /deeper than 64/ }],
    },
    {
      name: 'NUL in metadata',
      ...submit({ toolset: 'report', arguments: { title: 't' }, metadata: { note: 'a\u0000b' } }),
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '/metadata/note', message: /U\+0000/ }],
    },
    {
      name: 'repeated last_event_id',
      method: 'get',
      path: '/v1/threads/t1/events?last_event_id=a&last_event_id=b',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'Last-Event-ID' }],
    },
    {
      name: 'oversized body',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      contentType: 'application/json',
      body: json({ toolset: 'report', arguments: { title: 'x'.repeat(1024 * 1024) } }),
      status: 413,
      slug: 'payload-too-large',
    },
    {
      name: 'non-JSON body',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      contentType: 'text/plain',
      body: 'hello',
      status: 415,
      slug: 'unsupported-media-type',
      detail: 'The request body must be application/json.',
    },
    {
      name: 'form body',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      contentType: 'application/x-www-form-urlencoded',
      body: 'toolset=report',
      status: 415,
      slug: 'unsupported-media-type',
    },
    {
      name: 'non-JSON body without a token: 401 before the body is read',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      contentType: 'text/plain',
      body: 'hello',
      ...auth401,
      responseHeaders: { 'www-authenticate': 'Bearer' },
    },
    {
      name: 'oversized body with a malformed bearer: 401 before the body is read, not 413',
      method: 'post',
      path: '/v1/webhooks',
      auth: 'Bearer',
      contentType: 'application/json',
      announcedBodyBytes: 2 * 1024 * 1024,
      ...auth401,
      responseHeaders: { 'www-authenticate': 'Bearer' },
    },
    {
      name: 'bad JSON without a token: 401, not 400',
      method: 'post',
      path: '/v1/threads/t1/tasks/task_x/cancel',
      contentType: 'application/json',
      body: '{"nope',
      ...auth401,
    },
    {
      name: 'malformed JSON',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      contentType: 'application/json',
      body: '{"toolset": ',
      status: 400,
      slug: 'bad-request',
      detail: 'The request body is not valid JSON.',
    },
    {
      name: 'no body at all',
      method: 'post',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      status: 422,
      slug: 'validation',
      errors: [{ path: '' }],
    },
    {
      name: 'Idempotency-Key too long',
      ...submit({ toolset: 'report', arguments: { title: 't' } }),
      auth: 'KEY',
      headers: { 'Idempotency-Key': 'k'.repeat(256) },
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'Idempotency-Key' }],
    },
    {
      name: 'bad cursor',
      method: 'get',
      path: '/v1/tasks?cursor=not-a-cursor',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      detail: 'Invalid query parameters.',
      errors: [{ path: 'cursor' }],
    },
    {
      name: 'forged cursor (valid base64url, bad time)',
      method: 'get',
      path: `/v1/tasks?cursor=${Buffer.from(`2025-13-45T99:00:00.000000Z|${task}`).toString('base64url')}`,
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'cursor' }],
    },
    ...['0', '101', 'abc', '1.5', '-1', ''].map((limit): Case => ({
      name: `bad limit "${limit}"`,
      method: 'get',
      path: `/v1/threads/t1/tasks?limit=${limit}`,
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'limit', message: 'must be an integer from 1 to 100' }],
    })),
    {
      name: 'repeated limit',
      method: 'get',
      path: '/v1/tasks?limit=1&limit=2',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'limit' }],
    },
    {
      name: 'bad status filter',
      method: 'get',
      path: '/v1/tasks?status=done',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'status' }],
    },
    {
      name: 'a misspelt list filter',
      method: 'get',
      path: '/v1/tasks?stauts=failed&limit=5',
      auth: 'KEY',
      status: 400,
      slug: 'unknown-parameter',
      detail: 'Unknown query parameter: stauts.',
      errors: [{ path: 'stauts' }],
    },
    {
      name: 'a filter of the list across threads on a thread list',
      method: 'get',
      path: '/v1/threads/t1/tasks?thread_id=t2',
      auth: 'KEY',
      status: 400,
      slug: 'unknown-parameter',
      errors: [{ path: 'thread_id' }],
    },
    {
      name: 'a query parameter on a route that takes none',
      method: 'get',
      path: '/v1/toolsets?b=1&a=2',
      auth: 'KEY',
      status: 400,
      slug: 'unknown-parameter',
      errors: [{ path: 'a' }, { path: 'b' }],
    },
    {
      name: 'a bad created_after',
      method: 'get',
      path: '/v1/tasks?created_after=yesterday',
      auth: 'KEY',
      status: 400,
      slug: 'bad-request',
      errors: [{ path: 'created_after' }],
    },
    {
      name: 'unknown route',
      method: 'get',
      path: '/v2/nothing',
      auth: 'KEY',
      status: 404,
      slug: 'not-found',
      detail: 'No such resource.',
    },
    {
      name: 'unknown route without token',
      method: 'get',
      path: '/nothing',
      status: 404,
      slug: 'not-found',
    },
    {
      name: 'method not allowed',
      method: 'put',
      path: '/v1/tasks',
      auth: 'KEY',
      status: 405,
      slug: 'method-not-allowed',
      responseHeaders: { allow: 'GET, HEAD' },
    },
    {
      name: 'method not allowed on a parameterised route',
      method: 'patch',
      path: '/v1/threads/t1/tasks',
      auth: 'KEY',
      status: 405,
      slug: 'method-not-allowed',
      responseHeaders: { allow: 'GET, HEAD, POST' },
    },
  ];
}

/** The answer to a request whose announced body is never sent (see Case.announcedBodyBytes). */
function headersOnly(
  c: Case,
  auth: string | undefined,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {
      ...c.headers,
      'Content-Length': c.announcedBodyBytes ?? 0,
    };
    if (auth !== undefined) headers.Authorization = auth;
    if (c.contentType) headers['Content-Type'] = c.contentType;
    const req = httpRequest(`${api.url}${c.path}`, { method: c.method.toUpperCase(), headers });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe('bad requests', () => {
  it.each(cases().map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    let req = request(api.url)[c.method](c.path);
    const auth = c.auth === 'KEY' ? bearer(key) : c.auth === 'REVOKED' ? bearer(revoked) : c.auth;
    if (auth !== undefined) req = req.set('Authorization', auth);
    for (const [name, value] of Object.entries(c.headers ?? {})) req = req.set(name, value);
    if (c.contentType) req = req.set('Content-Type', c.contentType);
    const res =
      c.announcedBodyBytes !== undefined
        ? await headersOnly(c, auth)
        : await (c.body !== undefined ? req.send(c.body) : req);

    expect(res.status).toBe(c.status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = JSON.parse(res.text);
    expect(body).toMatchObject({ type: PROBLEM + c.slug, status: c.status });
    expect(typeof body.title).toBe('string');
    expect(typeof body.detail).toBe('string');
    if (c.detail instanceof RegExp) expect(body.detail).toMatch(c.detail);
    else if (c.detail !== undefined) expect(body.detail).toBe(c.detail);
    if (c.errors) {
      expect(body.errors).toHaveLength(c.errors.length);
      for (const expected of c.errors) {
        const found = body.errors.find((e: { path: string }) => e.path === expected.path);
        expect(found).toBeDefined();
        if (expected.message instanceof RegExp) expect(found.message).toMatch(expected.message);
        else if (expected.message) expect(found.message).toBe(expected.message);
      }
    } else {
      expect(body.errors).toBeUndefined();
    }
    for (const [name, value] of Object.entries(c.responseHeaders ?? {})) {
      if (value instanceof RegExp) expect(res.headers[name]).toMatch(value);
      else expect(res.headers[name]).toBe(value);
    }
    expect(res.text).not.toMatch(/\bat .+\.js:\d+|node_modules|SyntaxError|stack/);
  });

  it('accepts the same requests once they are right (the table can fail)', async () => {
    const jwt = signJwt('alice');
    await request(api.url).get('/v1/tasks').set('Authorization', bearer(jwt)).expect(200);
    await request(api.url)
      .get('/v1/tasks?limit=100&status=active')
      .set('Authorization', bearer(key))
      .expect(200);
    const created = await request(api.url)
      .post('/v1/threads/t1/tasks')
      .set('Authorization', bearer(key))
      .send({ toolset: 'report', arguments: { title: 't', pages: 3 }, metadata: { a: 1 } })
      .expect(201);
    expect(created.body).toMatchObject({ status: 'queued', toolset: 'report', metadata: { a: 1 } });
  });
});
