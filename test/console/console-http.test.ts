// Guards against the console's HTTP rules slipping: the session cookie's attributes and lifetime,
// sign-out and key revocation ending a session, CSRF on every change, the page headers (CSP,
// frame-ancestors), problem details for bad input (never a 500), and no answer link when off.
import request from 'supertest';
import { ApiKeyRepository } from '@app/persistence';
import { apiKeyFor, bearer, signJwt, useApi } from '../helpers/api';
import { insertTaskRow } from '../api/task-rows';
import { SseClient } from '../helpers/sse';
import { waitUntil } from '../helpers/wait';

const api = useApi({ env: { ADMIN_USERS: 'alice' } });

const QUESTION = {
  requests: {
    confirm: {
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: 'Go on?',
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean' } },
          required: ['confirm'],
        },
      },
    },
  },
};

interface Signed {
  cookie: string;
  csrf: string;
  setCookie: string;
}

async function signIn(token: string): Promise<Signed> {
  const res = await request(api.url).post('/console/session').send({ token });
  expect(res.status).toBe(204);
  const setCookie = (res.headers['set-cookie'] as unknown as string[])[0];
  const cookie = setCookie.split(';')[0];
  const page = await request(api.url).get('/console/tasks').set('Cookie', cookie);
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(page.text)?.[1] ?? '';
  return { cookie, csrf, setCookie };
}

/** A task of alice's waiting for an answer, as a poller leaves it (its event written). */
async function waitingTask(thread: string): Promise<string> {
  const id = await insertTaskRow(api.db.db, { status: 'working', thread_id: thread });
  await api.db.db.query(
    `UPDATE tasks SET status = 'input_required', input_required = $2 WHERE id = $1`,
    [id, JSON.stringify(QUESTION)],
  );
  return id;
}

it('exchanges an API key for an HttpOnly, SameSite=Strict cookie and refuses bad sign-ins with problems', async () => {
  const key = await apiKeyFor(api, 'alice');
  const { setCookie } = await signIn(key);
  expect(setCookie).toMatch(
    /^mtg_console=[A-Za-z0-9_-]{43}; Path=\/console; Max-Age=\d+; HttpOnly; SameSite=Strict$/,
  );
  const missing = await request(api.url).post('/console/session').send({});
  expect(missing.status).toBe(422);
  expect(missing.headers['content-type']).toContain('application/problem+json');
  expect(missing.body).toMatchObject({ errors: [{ path: '/token' }] });
  const wrong = await request(api.url).post('/console/session').send({ token: 'mtg_nope' });
  expect(wrong.status).toBe(401);
  expect(wrong.headers['set-cookie']).toBeUndefined();
  const crossSite = await request(api.url)
    .post('/console/session')
    .set('Origin', 'https://evil.example')
    .send({ token: key });
  expect(crossSite.status).toBe(403);
});

it('ends a JWT session no later than the token, and a key session once the key is revoked', async () => {
  const jwt = signJwt('alice', { exp: Math.floor(Date.now() / 1000) + 120 });
  const { setCookie } = await signIn(jwt);
  const maxAge = Number(/Max-Age=(\d+)/.exec(setCookie)![1]);
  expect(maxAge).toBeGreaterThan(100);
  expect(maxAge).toBeLessThanOrEqual(120);

  const keys = new ApiKeyRepository(api.db.db);
  const made = await keys.create('alice', 'revoked-later');
  const { cookie } = await signIn(made.key);
  expect((await request(api.url).get('/console/tasks').set('Cookie', cookie)).status).toBe(200);
  await keys.revoke(made.info.id);
  const after = await request(api.url).get('/console/tasks').set('Cookie', cookie);
  expect(after.status).toBe(303);
  expect(after.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Ftasks');
});

it('signs out for good: the same cookie, replayed, is dead', async () => {
  const { cookie, csrf } = await signIn(await apiKeyFor(api, 'alice'));
  const out = await request(api.url)
    .delete('/console/session')
    .set('Cookie', cookie)
    .set('X-CSRF-Token', csrf);
  expect(out.status).toBe(204);
  expect((out.headers['set-cookie'] as unknown as string[])[0]).toContain('Max-Age=0');
  expect((await request(api.url).get('/console/tasks').set('Cookie', cookie)).status).toBe(303);
});

it('needs the CSRF token and the same origin for every change', async () => {
  const id = await insertTaskRow(api.db.db, { status: 'working', thread_id: 'csrf' });
  const { cookie, csrf } = await signIn(await apiKeyFor(api, 'alice'));
  const cancel = `/console/api/threads/csrf/tasks/${id}/cancel`;
  const none = await request(api.url).post(cancel).set('Cookie', cookie);
  expect(none.status).toBe(403);
  expect(none.body).toMatchObject({ errors: [{ path: 'x-csrf-token' }] });
  const forged = await request(api.url)
    .post(cancel)
    .set('Cookie', cookie)
    .set('X-CSRF-Token', csrf.slice(0, -1) + (csrf.endsWith('A') ? 'B' : 'A'));
  expect(forged.status).toBe(403);
  const otherOrigin = await request(api.url)
    .post(cancel)
    .set('Cookie', cookie)
    .set('X-CSRF-Token', csrf)
    .set('Origin', 'https://evil.example');
  expect(otherOrigin.status).toBe(403);
  const noSession = await request(api.url).post(cancel).set('X-CSRF-Token', csrf);
  expect(noSession.status).toBe(401);
  const ok = await request(api.url).post(cancel).set('Cookie', cookie).set('X-CSRF-Token', csrf);
  expect(ok.status).toBe(202);
  expect(ok.body).toEqual({ status: 'working' });
});

it('serves pages with a strict CSP and no framing, and answers bad input with problem details', async () => {
  const { cookie, csrf } = await signIn(await apiKeyFor(api, 'alice'));
  const page = await request(api.url).get('/console/tasks').set('Cookie', cookie);
  expect(page.headers['content-security-policy']).toBe(
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  );
  expect(page.headers['x-frame-options']).toBe('DENY');
  expect(page.headers['cache-control']).toBe('no-store');
  expect(page.text).not.toMatch(/<script>|\sstyle=|\son[a-z]+=/);

  const pages: [string, number, string][] = [
    ['/console/tasks?status=bogus', 400, 'status'],
    ['/console/tasks?thread=no%20spaces', 400, 'thread'],
    ['/console/tasks?cursor=junk', 400, 'cursor'],
    ['/console/threads/bad%20id/tasks/task_aaaaaaaaaaaaaaaaaaaaaaaaaa', 400, 'thread_id'],
    ['/console/threads/t/tasks/nope', 400, 'task_id'],
    ['/console/threads/t/tasks/task_aaaaaaaaaaaaaaaaaaaaaaaaaa', 404, ''],
    ['/console/answer', 400, 'token'],
    ['/console/answer?token=a1.e30.AAAA', 404, ''],
  ];
  for (const [path, status, field] of pages) {
    const res = await request(api.url).get(path).set('Cookie', cookie);
    expect([path, res.status, res.headers['content-type']]).toEqual([
      path,
      status,
      'text/html; charset=utf-8',
    ]);
    expect(res.text).toContain('data-problem-type="https://mcp-task-gateway.dev/problems/');
    if (field) expect(res.text).toContain(`<code>${field}</code>`);
  }

  const id = await insertTaskRow(api.db.db, { status: 'working', thread_id: 'bad-input' });
  const input = `/console/api/threads/bad-input/tasks/${id}/input`;
  const changes: [string, unknown, number][] = [
    [input, { responses: {} }, 422],
    [input, [], 422],
    [input, { responses: { confirm: { action: 'accept' } } }, 409],
    ['/console/api/admin/tasks/nope/redrive', {}, 400],
    ['/console/api/admin/webhook-deliveries/x/replay', {}, 400],
    ['/console/answer', { token: 'a1.e30.AAAA', responses: {} }, 404],
  ];
  for (const [path, body, status] of changes) {
    const res = await request(api.url)
      .post(path)
      .set('Cookie', cookie)
      .set('X-CSRF-Token', csrf)
      .send(body as object);
    expect([path, res.status, res.headers['content-type']]).toEqual([
      path,
      status,
      'application/problem+json; charset=utf-8',
    ]);
  }
  const bob = await signIn(await apiKeyFor(api, 'bob'));
  const forbidden = await request(api.url)
    .post('/console/api/admin/tasks/task_aaaaaaaaaaaaaaaaaaaaaaaaaa/redrive')
    .set('Cookie', bob.cookie)
    .set('X-CSRF-Token', bob.csrf)
    .send({});
  expect(forbidden.status).toBe(403);
});

it('keeps the console out of /v1 and the OpenAPI document', async () => {
  const doc = await request(api.url).get('/openapi.json');
  expect(
    Object.keys((doc.body as { paths: object }).paths).filter((p) => p.includes('console')),
  ).toEqual([]);
});

it('sends no answer link while no public base URL is configured', async () => {
  const key = await apiKeyFor(api, 'alice');
  const id = await waitingTask('no-links');
  const sse = await SseClient.open(`${api.url}/v1/threads/no-links/events`, key);
  try {
    const event = await waitUntil(
      () => sse.events.find((e) => e.event === 'task.input_required'),
      'the input_required event',
    );
    expect((event.data.task as { task_id: string }).task_id).toBe(id);
    expect(event.data.data).toEqual({ previous_status: 'working' });
  } finally {
    sse.close();
  }
  const res = await request(api.url)
    .get('/v1/threads/no-links/tasks')
    .set('Authorization', bearer(key));
  expect(res.status).toBe(200);
});

it('filters the task list by status, toolset and thread, and pages it with the API cursor', async () => {
  const { cookie } = await signIn(await apiKeyFor(api, 'alice'));
  const first = await insertTaskRow(api.db.db, { thread_id: 'pages', status: 'working' });
  const second = await insertTaskRow(api.db.db, { thread_id: 'pages', status: 'working' });
  await insertTaskRow(api.db.db, { thread_id: 'pages', status: 'working', toolset: 'other' });
  await insertTaskRow(api.db.db, { thread_id: 'pages', status: 'completed' });
  await insertTaskRow(api.db.db, { thread_id: 'elsewhere', status: 'working' });
  const rows = (html: string): string[] =>
    [...html.matchAll(/<tr data-task-id="([^"]+)"/g)].map((m) => m[1]);
  const page1 = await request(api.url)
    .get('/console/tasks?status=working&toolset=report&thread=pages&limit=1')
    .set('Cookie', cookie);
  expect(rows(page1.text)).toEqual([second]);
  const next = /<a class="next" href="([^"]+)"/.exec(page1.text)![1].replace(/&amp;/g, '&');
  const page2 = await request(api.url).get(next).set('Cookie', cookie);
  expect(rows(page2.text)).toEqual([first]);
  expect(page2.text).not.toContain('class="next"');
});
