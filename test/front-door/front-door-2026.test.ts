// Guards against the MCP front door's 2026-07-28 side (tasks extension) and its transport checks
// breaking: discover, the _meta envelope, server-decided tasks, DetailedTask, the -32020/-32021
// errors, removed methods, cancel acks, and the Origin, token and held-call disconnect rules (a
// client giving up ends only the hold by default).
import { request as httpRequest } from 'node:http';
import { signJwt } from '../helpers/api';
import { PROTOCOL_2026, TASKS_EXTENSION } from '../helpers/mcp-2026';
import { waitUntil } from '../helpers/wait';
import { postMcp, postMcp2026, useFrontDoor } from './front-door-harness';

const V = PROTOCOL_2026;
const TASKS = TASKS_EXTENSION;
const fd = useFrontDoor();

/** One 2026 request as alice (or `options.key`), with the envelope a conforming client sends. */
function call2026(
  method: string,
  params: Record<string, unknown> = {},
  options: { declare?: boolean; key?: string; headers?: Record<string, string> } = {},
) {
  return postMcp2026(fd.api.url, options.key ?? fd.keys.alice, method, params, options);
}

it('server/discover advertises the tasks extension, never the legacy tasks capability', async () => {
  const res = await call2026('server/discover');
  expect(res.status).toBe(200);
  expect(res.body.result).toMatchObject({
    resultType: 'complete',
    supportedVersions: [V],
    capabilities: { extensions: { [TASKS]: {} } },
  });
  expect(res.body.result.capabilities.tasks).toBeUndefined();
  expect(res.body.result._meta['io.modelcontextprotocol/serverInfo'].name).toBeDefined();
});

it('a declaring tools/call gets a flat CreateTaskResult; tasks/get inlines the result', async () => {
  const created = await call2026('tools/call', {
    name: 'demo-sync',
    arguments: { duration_ms: 200, result: { n: 7 } },
    task: { ttl: 1 },
  });
  expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  const task = created.body.result;
  for (const absent of ['task', 'result', 'error', 'inputRequests', 'ttl', 'pollInterval']) {
    expect(task).not.toHaveProperty(absent);
  }
  expect(task.ttlMs).toBeGreaterThan(0);
  expect(task.pollIntervalMs).toBeGreaterThan(0);
  // Durable before the answer: an immediate get resolves.
  const first = await call2026('tasks/get', { taskId: task.taskId });
  expect(first.body.result.resultType).toBe('complete');
  const done = await waitUntil(
    async () => {
      const got = await call2026('tasks/get', { taskId: task.taskId });
      return got.body.result.status === 'completed' ? got.body.result : undefined;
    },
    'the task to complete',
    30_000,
  );
  expect(JSON.stringify(done.result.content)).toContain('7');
  expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
});

it('a non-declaring call runs synchronously; a required tool answers -32021 with data', async () => {
  const held = await call2026(
    'tools/call',
    { name: 'demo-sync', arguments: { duration_ms: 100, result: { sync: 1 } } },
    { declare: false },
  );
  expect(held.body.result.resultType).toBe('complete');
  expect(held.body.result.taskId).toBeUndefined();
  expect(JSON.stringify(held.body.result.content)).toContain('sync');
  const refused = await call2026(
    'tools/call',
    { name: 'demo-native', arguments: {} },
    { declare: false },
  );
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe(-32021);
  expect(refused.body.error.data).toEqual({
    requiredCapabilities: { extensions: { [TASKS]: {} } },
  });
});

it('tasks/* without the declared extension is -32021; unknown task -32602; removed methods 404', async () => {
  const created = await call2026('tools/call', { name: 'demo-sync', arguments: {} });
  const taskId = created.body.result.taskId;
  const undeclared = await call2026('tasks/get', { taskId }, { declare: false });
  expect([undeclared.status, undeclared.body.error.code]).toEqual([400, -32021]);
  const unknown = await call2026('tasks/get', { taskId: 'task_aaaaaaaaaaaaaaaaaaaaaaaaaa' });
  expect(unknown.body.error.code).toBe(-32602);
  for (const method of ['tasks/result', 'tasks/list']) {
    const res = await call2026(method, method === 'tasks/result' ? { taskId } : {});
    expect([res.status, res.body.error.code]).toEqual([404, -32601]);
  }
});

it('Mcp-Name and Mcp-Method must match the body: -32020 with HTTP 400', async () => {
  const created = await call2026('tools/call', { name: 'demo-sync', arguments: {} });
  const taskId = created.body.result.taskId;
  const wrongName = await call2026('tasks/get', { taskId }, { headers: { 'mcp-name': 'task_x' } });
  expect([wrongName.status, wrongName.body.error.code]).toEqual([400, -32020]);
  const wrongMethod = await call2026(
    'tasks/get',
    { taskId },
    { headers: { 'mcp-method': 'tasks/cancel' } },
  );
  expect([wrongMethod.status, wrongMethod.body.error.code]).toEqual([400, -32020]);
});

it('tasks/cancel is an empty ack, also for a task that has ended; another user gets -32602', async () => {
  const created = await call2026('tools/call', {
    name: 'demo-sync',
    arguments: { duration_ms: 600_000 },
  });
  const taskId = created.body.result.taskId;
  const other = await call2026('tasks/cancel', { taskId }, { key: fd.keys.bob });
  expect(other.body.error.code).toBe(-32602);
  const ack = await call2026('tasks/cancel', { taskId });
  expect(ack.body.result).toEqual({ resultType: 'complete' });
  await waitUntil(
    async () => {
      const got = await call2026('tasks/get', { taskId });
      return got.body.result.status === 'cancelled' ? true : undefined;
    },
    'the task to end cancelled',
    // Well inside the held call's first renewal (lease/3, 20 s): the cancel was requested while
    // the call was starting, and its notice must not be lost (docs/leases.md, "Timeouts").
    10_000,
  );
  const again = await call2026('tasks/cancel', { taskId });
  expect(again.body.result).toEqual({ resultType: 'complete' });
  const bobGet = await call2026('tasks/get', { taskId }, { key: fd.keys.bob });
  const neverGet = await call2026('tasks/get', { taskId: 'task_bbbbbbbbbbbbbbbbbbbbbbbbbb' });
  expect(bobGet.body.error).toEqual(neverGet.body.error);
});

it('a browser Origin that is not loopback or allowed is refused before anything runs', async () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    },
  };
  const evil = await postMcp(fd.api.url, init, {
    authorization: `Bearer ${fd.keys.alice}`,
    origin: 'http://evil.example.com',
    host: 'evil.example.com',
  });
  expect(evil.status).toBe(403);
  const local = await postMcp(fd.api.url, init, {
    authorization: `Bearer ${fd.keys.alice}`,
    origin: 'http://127.0.0.1:1234',
  });
  expect(local.status).toBe(200);
  expect(local.body.result.capabilities.tasks).toBeDefined();
});

it('no token is a 401 whose challenge names the protected-resource metadata', async () => {
  const res = await postMcp(fd.api.url, { jsonrpc: '2.0', id: 1, method: 'ping' }, {});
  expect(res.status).toBe(401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  expect(url).toMatch(/\/\.well-known\/oauth-protected-resource\/mcp$/);
  const doc = (await (await fetch(url!)).json()) as Record<string, unknown>;
  expect(doc.resource).toMatch(/\/mcp$/);
  expect(doc.authorization_servers).toEqual(['https://issuer.test']);
  // A JWT of the configured issuer is a principal like an API key.
  const withJwt = await postMcp(
    fd.api.url,
    { jsonrpc: '2.0', id: 2, method: 'ping' },
    {
      authorization: `Bearer ${signJwt('carol')}`,
    },
  );
  expect(withJwt.status).toBe(200);
});

it('a held call whose client disconnects ends only the hold: its task goes on to complete', async () => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 99,
    method: 'tools/call',
    params: { name: 'demo-sync', arguments: { duration_ms: 4_000, result: { held: 'gone' } } },
  });
  const url = new URL(`${fd.api.url}/mcp?thread=held-thread`);
  const req = httpRequest(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${fd.keys.alice}`,
      'content-length': Buffer.byteLength(body),
    },
  });
  req.on('error', () => undefined);
  req.end(body);
  const list = async () => {
    const res = await fetch(`${fd.api.url}/v1/threads/held-thread/tasks`, {
      headers: { authorization: `Bearer ${fd.keys.alice}` },
    });
    return ((await res.json()) as { items: { task_id: string; status: string }[] }).items;
  };
  const task = await waitUntil(
    async () => {
      const items = await list();
      return items[0]?.status === 'working' ? items[0] : undefined;
    },
    'the held task to start upstream',
    30_000,
  );
  req.destroy();
  const ended = await waitUntil(
    async () => {
      const items = await list();
      const row = items.find((t) => t.task_id === task.task_id);
      return row && row.status !== 'working' ? row : undefined;
    },
    'the held task to end',
    30_000,
  );
  expect(ended.status).toBe('completed');
});

it("subscriptions/listen streams notifications/tasks until the task ends; other users' IDs are dropped", async () => {
  const created = await call2026('tools/call', {
    name: 'demo-sync',
    arguments: { duration_ms: 500, result: { pushed: true } },
  });
  const mine = created.body.result.taskId as string;
  const bobs = (
    await call2026('tools/call', { name: 'demo-sync', arguments: {} }, { key: fd.keys.bob })
  ).body.result.taskId as string;
  const undeclared = await call2026(
    'subscriptions/listen',
    { notifications: { taskIds: [mine] } },
    { declare: false },
  );
  expect([undeclared.status, undeclared.body.error.code]).toEqual([400, -32021]);
  const res = await fetch(`${fd.api.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${fd.keys.alice}`,
      'mcp-protocol-version': V,
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 77,
      method: 'subscriptions/listen',
      params: {
        notifications: { taskIds: [mine, bobs] },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': V,
          'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
        },
      },
    }),
  });
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const messages = (await res.text())
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
  expect(messages[0].method).toBe('notifications/subscriptions/acknowledged');
  expect(messages[0].params.notifications.taskIds).toEqual([mine]);
  const notes = messages.filter((m) => m.method === 'notifications/tasks');
  for (const note of notes) {
    expect(note.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(77);
    expect(note.params.taskId).toBe(mine);
    expect(note.params.resultType).toBeUndefined();
  }
  const last = notes[notes.length - 1];
  expect(last.params.status).toBe('completed');
  expect(JSON.stringify(last.params.result)).toContain('pushed');
  expect(messages[messages.length - 1]).toMatchObject({
    id: 77,
    result: { resultType: 'complete' },
  });
});

it('notifications/cancelled for a held call ends the call with its task named; the task goes on', async () => {
  const held = postMcp(
    `${fd.api.url}`,
    {
      jsonrpc: '2.0',
      id: 'held-1',
      method: 'tools/call',
      params: {
        name: 'demo-sync',
        arguments: { duration_ms: 4_000, result: { held: 'cancel' } },
        _meta: { 'mcp-task-gateway/thread': 'cancel-thread' },
      },
    },
    { authorization: `Bearer ${fd.keys.alice}` },
  );
  const running = await waitUntil(
    async () => {
      const res = await fetch(`${fd.api.url}/v1/threads/cancel-thread/tasks`, {
        headers: { authorization: `Bearer ${fd.keys.alice}` },
      });
      const items = ((await res.json()) as { items: { task_id: string; status: string }[] }).items;
      return items.find((t) => t.status === 'working');
    },
    'the held task to start upstream',
    30_000,
  );
  const cancel = await postMcp(
    fd.api.url,
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'held-1' } },
    { authorization: `Bearer ${fd.keys.alice}` },
  );
  expect(cancel.status).toBe(202);
  const answer = await held;
  expect(answer.body.result.isError).toBeUndefined();
  expect(answer.body.result.structuredContent.task_id).toBe(running.task_id);
  expect(answer.body.result.content[0].text).toMatch(/the client gave up on this call/);
  const ended = await waitUntil(
    async () => {
      const res = await fetch(`${fd.api.url}/v1/tasks`, {
        headers: { authorization: `Bearer ${fd.keys.alice}` },
      });
      const items = ((await res.json()) as { items: { task_id: string; status: string }[] }).items;
      const row = items.find((t) => t.task_id === running.task_id);
      return row && row.status !== 'working' ? row : undefined;
    },
    'the held task to end',
    30_000,
  );
  expect(ended.status).toBe('completed');
});
