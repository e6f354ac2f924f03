// Guards against holes at the API's edges: the bearer-first check skipped for `/V1/…` and absent
// on `/mcp`, a malformed Host turning /mcp's 401 into a 500, a cancel the database refused being
// acknowledged on /mcp, and answers to questions bounded only by the 1 MiB body.
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { apiKeyFor, bearer, useApi } from '../helpers/api';
import { request2026 } from '../helpers/mcp-2026';
import { insertTaskRow } from './task-rows';

const api = useApi();
let key: string;

beforeAll(async () => {
  key = await apiKeyFor(api, 'alice');
});

/** A request with a `Host` header of the test's choosing (fetch and supertest set their own). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const url = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers, setHost: false },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('bearer first', () => {
  // A body the API answers 415 once it looks at it: a 401 says it did not.
  it.each([
    ['an upper-case /V1/ path', '/V1/threads/t1/tasks'],
    ['/mcp', '/mcp'],
    ['/MCP/', '/MCP/'],
  ])('refuses %s without a token before reading the body', async (_what, path) => {
    const res = await request(api.url).post(path).set('Content-Type', 'text/plain').send('x');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('still answers DELETE /mcp with 405 to anyone', async () => {
    const res = await request(api.url).delete('/mcp');
    expect(res.status).toBe(405);
  });
});

describe('a malformed Host on /mcp', () => {
  it.each([
    ['no token', {}],
    ['a token nobody issued', { authorization: 'Bearer not-a-key' }],
  ])('is the 401 with the plain challenge (%s), the host never echoed', async (_what, auth) => {
    for (const host of ['[bad', 'a b', 'x:y:z', 'host"with"quotes']) {
      const res = await rawRequest(
        'POST',
        '/mcp',
        { host, 'content-type': 'application/json', ...auth },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      );
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).not.toContain(host);
    }
  });

  it('answers the metadata document 404, not 500', async () => {
    const res = await rawRequest('GET', '/.well-known/oauth-protected-resource/mcp', {
      host: '[bad',
    });
    expect(res.status).toBe(404);
  });

  it('names a well-formed host in the challenge', async () => {
    const res = await rawRequest('POST', '/mcp', { host: 'gateway.example:8443' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(
      'Bearer resource_metadata="http://gateway.example:8443/.well-known/oauth-protected-resource/mcp"',
    );
  });
});

describe('a cancel the database refuses', () => {
  beforeAll(async () => {
    // A real refusal by Postgres, for this user's tasks only.
    await api.db.db.query(`
      CREATE FUNCTION refuse_cancel() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'cancel refused by the test'; END $$;
      CREATE TRIGGER refuse_cancel BEFORE UPDATE ON tasks FOR EACH ROW
        WHEN (NEW.user_id = 'refused' AND NEW.cancel_requested_at IS NOT NULL
              AND OLD.cancel_requested_at IS NULL)
        EXECUTE FUNCTION refuse_cancel();`);
  });

  const working = () =>
    insertTaskRow(api.db.db, {
      user_id: 'refused',
      status: 'working',
      submitted_at: new Date(),
      remote_task_id: 'rt-1',
    });
  const cancelRequested = async (id: string) =>
    (
      await api.db.db.query<{ at: Date | null }>(
        `SELECT cancel_requested_at AS at FROM tasks WHERE id = $1`,
        [id],
      )
    )[0].at;

  it('is an error on the 2026-07-28 side, not the empty ack', async () => {
    const token = bearer(await apiKeyFor(api, 'refused'));
    const id = await working();
    const { body, headers } = request2026('tasks/cancel', { taskId: id });
    const res = await request(api.url)
      .post('/mcp')
      .set({ ...headers, authorization: token, accept: 'application/json, text/event-stream' })
      .send(body);
    expect(res.body.result).toBeUndefined();
    expect(res.body.error.code).toBe(-32603);
    expect(await cancelRequested(id)).toBeNull();
  });

  it('is an error on the 2025-11-25 side, not the task', async () => {
    const token = bearer(await apiKeyFor(api, 'refused'));
    const id = await working();
    const res = await request(api.url)
      .post('/mcp')
      .set({ authorization: token, accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: 7, method: 'tasks/cancel', params: { taskId: id } });
    expect(res.body.result).toBeUndefined();
    expect(res.body.error.code).toBe(-32603);
    expect(await cancelRequested(id)).toBeNull();
  });
});

describe('the size of an answer', () => {
  const QUESTION = {
    method: 'elicitation/create',
    params: { mode: 'form', message: 'Notes?' },
  };
  const waiting = () =>
    insertTaskRow(api.db.db, {
      contract: 'mcp-tasks',
      status: 'input_required',
      submitted_at: new Date(),
      remote_task_id: 'tk-1',
      remote_protocol_version: '2026-07-28',
      next_attempt_at: new Date(Date.now() + 3_600_000),
      input_required: JSON.stringify({ requests: { notes: QUESTION } }),
    });
  const stored = async (id: string) =>
    (
      await api.db.db.query<{ r: unknown }>(
        `SELECT input_responses AS r FROM tasks WHERE id = $1`,
        [id],
      )
    )[0].r;
  // 70,000 bytes of JSON: over the default 65,536, well under the body's 1 MiB.
  const big = { action: 'accept', content: { notes: 'n'.repeat(70_000) } };

  it('is refused over POST …/input with 413 naming the bound; nothing is stored', async () => {
    const id = await waiting();
    const res = await request(api.url)
      .post(`/v1/threads/thread-1/tasks/${id}/input`)
      .set('Authorization', bearer(key))
      .send({ responses: { notes: big } });
    expect(res.status).toBe(413);
    expect(res.body.detail).toBe(
      'An answer may hold at most 65536 bytes of JSON (MAX_INPUT_RESPONSE_BYTES).',
    );
    expect(res.body.errors).toEqual([
      { path: '/responses/notes', message: expect.stringMatching(/^is 700\d\d bytes of JSON/) },
    ]);
    expect(await stored(id)).toBeNull();
    // Under the bound it is stored.
    const small = { action: 'accept', content: { notes: 'short' } };
    await request(api.url)
      .post(`/v1/threads/thread-1/tasks/${id}/input`)
      .set('Authorization', bearer(key))
      .send({ responses: { notes: small } })
      .expect(202);
  });

  it('is refused over /mcp tasks/update with -32602 naming the bound; nothing is stored', async () => {
    const id = await waiting();
    const { body, headers } = request2026('tasks/update', {
      taskId: id,
      inputResponses: { notes: big },
    });
    const res = await request(api.url)
      .post('/mcp')
      .set({
        ...headers,
        authorization: bearer(key),
        accept: 'application/json, text/event-stream',
      })
      .send(body);
    expect(res.body.error.code).toBe(-32602);
    expect(res.body.error.message).toContain('MAX_INPUT_RESPONSE_BYTES');
    expect(await stored(id)).toBeNull();
  });
});
