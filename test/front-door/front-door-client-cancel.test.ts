// Guards against a client's give-up on a held call reaching further than it should: a timeout's
// notifications/cancelled (or a closed connection) must end only that client's own hold, never
// another client's call reusing the JSON-RPC ID, and cancel the task only where the toolset says
// clientCancel "task"; against held calls, result waits and listen streams without a per-user
// cap; against held calls that outlast a client's timeout without progress or without naming
// their task; and against a retried tools/call starting a second task (docs/mcp.md).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { request as httpRequest } from 'node:http';
import { apiKeyFor } from '../helpers/api';
import { request2026 } from '../helpers/mcp-2026';
import { recordingFetch, sdkClient } from '../helpers/mcp-client';
import { waitUntil } from '../helpers/wait';
import { DEMO_TOOLSETS, postMcp, postMcp2026, useFrontDoor } from './front-door-harness';

const HOLD_MS = 6_000;
const IDEMPOTENCY = 'mcp-task-gateway/idempotencyKey';
const fd = useFrontDoor({
  toolsets: [
    ...DEMO_TOOLSETS.filter((t) => t.name === 'demo-ordinary' || t.name === 'demo-sync'),
    {
      name: 'demo-strict',
      contract: 'mcp-tasks',
      tool: 'demo_task_optional',
      mcp: { toolName: 'strict', clientCancel: 'task' },
    },
  ],
  apiEnv: {
    MCP_MAX_HOLD_MS: String(HOLD_MS),
    MCP_PROGRESS_INTERVAL_MS: '250',
    MCP_MAX_HELD_CALLS_PER_USER: '2',
    MCP_MAX_RESULT_WAITS_PER_USER: '1',
    MCP_MAX_LISTEN_STREAMS_PER_USER: '1',
  },
});
const clients: Client[] = [];

// After the front door's own afterAll has stopped it.
afterAll(async () => {
  for (const client of clients) await client.close();
});

async function client(
  thread: string,
  key = fd.keys.alice,
): Promise<{ client: Client; sent: ReturnType<typeof recordingFetch>['sent'] }> {
  const recorder = recordingFetch();
  const c = await sdkClient(fd.api.url, key, `?thread=${thread}`, {
    capabilities: {},
    fetch: recorder.fetch,
  });
  clients.push(c);
  return { client: c, sent: recorder.sent };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read JSON bodies by path
async function tasksIn(thread: string, key = fd.keys.alice): Promise<any[]> {
  const res = await fetch(`${fd.api.url}/v1/threads/${thread}/tasks`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return ((await res.json()) as { items: unknown[] }).items;
}

/** Waits until the one task of `thread` has ended; answers its status. */
async function endOf(thread: string): Promise<string> {
  return waitUntil(
    async () => {
      const [task] = await tasksIn(thread);
      return task && ['completed', 'failed', 'cancelled'].includes(task.status)
        ? (task.status as string)
        : undefined;
    },
    `the task of ${thread} to end`,
    30_000,
  );
}

/** Waits until the client's notifications/cancelled was taken (202). */
async function cancelSent(sent: { message: { method?: string }; status: number }[]) {
  await waitUntil(
    () => sent.find((s) => s.message.method === 'notifications/cancelled' && s.status === 202),
    'the client to send notifications/cancelled',
  );
}

async function timesOut(call: Promise<unknown>): Promise<void> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
}

it('a client timing out cancels only its hold: the task completes, the hold frees its slot', async () => {
  const { client: c, sent } = await client('timeout-hold');
  await timesOut(
    c.callTool({ name: 'demo-sync', arguments: { duration_ms: 4_000 } }, undefined, {
      timeout: 500,
    }),
  );
  await cancelSent(sent);
  // MCP_MAX_HELD_CALLS_PER_USER is 2: both fit only if the abandoned hold let go of its slot.
  const more = await Promise.all(
    [1, 2].map(() => c.callTool({ name: 'demo-sync', arguments: { duration_ms: 200 } })),
  );
  expect(more.map((r) => r.isError)).toEqual([undefined, undefined]);
  expect(await endOf('timeout-hold')).toBe('completed');
});

it('where the toolset says clientCancel "task", a client timing out cancels the task too', async () => {
  const { client: c, sent } = await client('timeout-task');
  await timesOut(
    c.callTool({ name: 'strict', arguments: { duration_ms: 60_000 } }, undefined, {
      timeout: 500,
    }),
  );
  await cancelSent(sent);
  expect(await endOf('timeout-task')).toBe('cancelled');
});

it("notifications/cancelled reaches only its own client's call, not another's with the same ID", async () => {
  const a = await client('iso-a');
  const b = await client('iso-b');
  // A's call is held first; B's, with the same ID and the same user, after it.
  const aCall = a.client.callTool(
    { name: 'strict', arguments: { duration_ms: 60_000 } },
    undefined,
    {
      timeout: 1_500,
    },
  );
  await waitUntil(async () => (await tasksIn('iso-a'))[0], "A's task to be stored");
  const bCall = b.client.callTool({
    name: 'strict',
    arguments: { duration_ms: 3_000, result: { mine: 'B' } },
  }) as Promise<CallToolResult>;
  // B's call is held before A's cancel is sent, or the cancel could not have reached it.
  await waitUntil(async () => (await tasksIn('iso-b'))[0], "B's task to be stored");
  await timesOut(aCall);
  await cancelSent(a.sent);
  const bResult = await bCall;
  // A held call's POST is recorded when its answer comes, so B's is compared after it.
  const ids = [a.sent, b.sent].map(
    (sent) => sent.find((s) => s.message.method === 'tools/call')?.message.id,
  );
  expect(ids[0]).toBe(ids[1]);
  expect(bResult.isError).toBeFalsy();
  // B's answer is its result, or, on a machine slow enough that the 3 s task outlived the 6 s
  // hold, the hold's end naming the task still working: either way not a cancel.
  if (!JSON.stringify(bResult).includes('"mine":"B"')) {
    expect(bResult.structuredContent).toMatchObject({ status: 'working', thread_id: 'iso-b' });
  }
  expect(await endOf('iso-b')).toBe('completed');
  const [bTask] = await tasksIn('iso-b');
  const bStored = await fetch(`${fd.api.url}/v1/threads/iso-b/tasks/${bTask.task_id}`, {
    headers: { authorization: `Bearer ${fd.keys.alice}` },
  });
  expect(JSON.stringify(await bStored.json())).toContain('"mine":"B"');
  expect(await endOf('iso-a')).toBe('cancelled');
});

it('a 2026 held call whose client disconnects cancels its task where the toolset says "task"', async () => {
  const { body, headers } = request2026(
    'tools/call',
    {
      name: 'strict',
      arguments: { duration_ms: 60_000 },
      _meta: { 'mcp-task-gateway/thread': 'gone-2026' },
    },
    { declare: false },
  );
  const text = JSON.stringify(body);
  const req = httpRequest(new URL(`${fd.api.url}/mcp`), {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${fd.keys.alice}`,
      'content-length': Buffer.byteLength(text),
    },
  });
  req.on('error', () => undefined);
  req.end(text);
  await waitUntil(
    async () => ((await tasksIn('gone-2026'))[0]?.status === 'working' ? true : undefined),
    'the held task to start upstream',
  );
  req.destroy();
  expect(await endOf('gone-2026')).toBe('cancelled');
});

it('progress keeps a client that resets its timeout on progress waiting past that timeout', async () => {
  const { client: c } = await client('progress');
  const seen: number[] = [];
  const result = (await c.callTool(
    // Progress every 250 ms against a 1.5 s timeout: a stall of the API or of this process of
    // about a second does not end the call. The call (3 s) outlasts the timeout and leaves 3 s
    // of the 6 s hold for the claim and the submit, as before.
    { name: 'demo-sync', arguments: { duration_ms: 3_000, result: { done: 'late' } } },
    undefined,
    { timeout: 1_500, resetTimeoutOnProgress: true, onprogress: (p) => seen.push(p.progress) },
  )) as CallToolResult;
  expect(result.isError).toBeFalsy();
  expect(JSON.stringify(result.structuredContent)).toContain('late');
  expect(seen.length).toBeGreaterThanOrEqual(3);
  expect([...seen].sort((x, y) => x - y)).toEqual(seen);
  expect(new Set(seen).size).toBe(seen.length);
});

it('a hold that ends with the task running answers a result naming the task, in both eras', async () => {
  const [legacy, modern] = await Promise.all([
    postMcp(
      `${fd.api.url}`,
      {
        jsonrpc: '2.0',
        id: 'long-1',
        method: 'tools/call',
        params: {
          name: 'demo-sync',
          arguments: { duration_ms: 60_000 },
          _meta: { 'mcp-task-gateway/thread': 'hold-end' },
        },
      },
      { authorization: `Bearer ${fd.keys.alice}` },
    ),
    postMcp2026(
      fd.api.url,
      fd.keys.alice,
      'tools/call',
      {
        name: 'demo-sync',
        arguments: { duration_ms: 60_000 },
        _meta: { 'mcp-task-gateway/thread': 'hold-end' },
      },
      { declare: false },
    ),
  ]);
  expect(modern.body.result.resultType).toBe('complete');
  for (const result of [legacy.body.result, modern.body.result]) {
    expect(result.isError).toBeUndefined();
    const taskId = result.structuredContent.task_id as string;
    expect(result.structuredContent).toMatchObject({ status: 'working', thread_id: 'hold-end' });
    expect(result.content[0].text).toContain(taskId);
    expect(result.content[0].text).toContain('gateway_task_get');
    expect(result.content[0].text).toContain(`/v1/threads/hold-end/tasks/${taskId}`);
    const get = await postMcp(
      fd.api.url,
      { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId } },
      { authorization: `Bearer ${fd.keys.alice}` },
    );
    expect(get.body.result.status).toBe('working');
  }
}, 30_000);

it('caps held calls, tasks/result waits and listen streams per user with -32029', async () => {
  const carol = await apiKeyFor(fd.api, 'carol');
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const held = (key: string, id: number) =>
    postMcp(
      fd.api.url,
      {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'demo-sync',
          arguments: { duration_ms: 3_000 },
          _meta: { 'mcp-task-gateway/thread': 'capped' },
        },
      },
      as(key),
    );
  const first = [held(carol, 1), held(carol, 2)];
  await waitUntil(
    async () => ((await tasksIn('capped', carol)).length === 2 ? true : undefined),
    'two held calls',
  );
  const third = await held(carol, 3);
  expect(third.body.error).toMatchObject({
    code: -32029,
    data: { quota: 'held_calls', retryAfterSeconds: expect.any(Number) },
  });
  expect(third.body.error.data.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  expect(third.body.error.data.retryAfterSeconds).toBeLessThanOrEqual(HOLD_MS / 1000);
  expect(await tasksIn('capped', carol)).toHaveLength(2); // the refused call created nothing
  const bobs = await held(fd.keys.bob, 4); // another user is not capped by carol's calls
  expect(bobs.body.result.isError).toBeUndefined();
  await Promise.all(first);

  // tasks/result: one wait at once (MCP_MAX_RESULT_WAITS_PER_USER=1). The task runs far longer
  // than the test, so neither wait can end with the task: whichever arrives second is refused,
  // and the other is released by the cancel.
  const created = await postMcp(
    fd.api.url,
    {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'demo-sync', arguments: { duration_ms: 600_000 }, task: {} },
    },
    as(carol),
  );
  const taskId = created.body.result.task.taskId as string;
  const result = (id: number) =>
    postMcp(
      fd.api.url,
      { jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } },
      as(carol),
    );
  const waits = [result(6), result(7)];
  const firstBack = await Promise.race(waits);
  expect(firstBack.body.error).toMatchObject({ code: -32029, data: { quota: 'result_waits' } });
  const cancel = await postMcp(
    fd.api.url,
    { jsonrpc: '2.0', id: 10, method: 'tasks/cancel', params: { taskId } },
    as(carol),
  );
  expect(cancel.body.error).toBeUndefined();
  const both = await Promise.all(waits);
  expect(both.filter((r) => r.body.error?.code === -32029)).toHaveLength(1);

  // subscriptions/listen: one stream at once (MCP_MAX_LISTEN_STREAMS_PER_USER=1).
  const listenTask = await postMcp2026(fd.api.url, carol, 'tools/call', {
    name: 'demo-sync',
    arguments: { duration_ms: 3_000 },
  });
  // The first stream is read raw: its answer is SSE, open once its headers are in.
  const opening = request2026(
    'subscriptions/listen',
    { notifications: { taskIds: [listenTask.body.result.taskId] } },
    { id: 8 },
  );
  const stream = await fetch(`${fd.api.url}/mcp`, {
    method: 'POST',
    headers: {
      ...opening.headers,
      ...as(carol),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(opening.body),
  });
  expect(stream.status).toBe(200);
  const refused = await postMcp2026(
    fd.api.url,
    carol,
    'subscriptions/listen',
    { notifications: { taskIds: [listenTask.body.result.taskId] } },
    { id: 9 },
  );
  expect(refused.body.error).toMatchObject({ code: -32029, data: { quota: 'listen_streams' } });
  expect(await stream.text()).toContain('"resultType":"complete"');
}, 60_000);

it('a retried tools/call with the same idempotency key returns the same task; other arguments are refused', async () => {
  const as = { authorization: `Bearer ${fd.keys.alice}` };
  const create = (id: number, tag: string, key = 'retry-1') =>
    postMcp(
      fd.api.url,
      {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: 'report',
          arguments: { duration_ms: 100, tag },
          task: {},
          _meta: { 'mcp-task-gateway/thread': 'retries', [IDEMPOTENCY]: key },
        },
      },
      as,
    );
  const first = await create(1, 'a');
  const again = await create(2, 'a');
  expect(again.body.result.task.taskId).toBe(first.body.result.task.taskId);
  const other = await create(3, 'b');
  expect(other.body.error.code).toBe(-32602);
  expect(other.body.error.message).toContain(`_meta["${IDEMPOTENCY}"]`);
  // The 2026 side, and /v1 with the same key: one namespace per user, the same task.
  const modern = await postMcp2026(fd.api.url, fd.keys.alice, 'tools/call', {
    name: 'report',
    arguments: { duration_ms: 100, tag: 'a' },
    _meta: { 'mcp-task-gateway/thread': 'retries', [IDEMPOTENCY]: 'retry-1' },
  });
  expect(modern.body.result.taskId).toBe(first.body.result.task.taskId);
  const v1 = await fetch(`${fd.api.url}/v1/threads/retries/tasks`, {
    method: 'POST',
    headers: { ...as, 'content-type': 'application/json', 'idempotency-key': 'retry-1' },
    body: JSON.stringify({ toolset: 'demo-ordinary', arguments: { duration_ms: 100, tag: 'a' } }),
  });
  expect(((await v1.json()) as { task_id: string }).task_id).toBe(first.body.result.task.taskId);
  expect(await tasksIn('retries')).toHaveLength(1);
  const bad = await create(4, 'a', ' leading space');
  expect(bad.body.error.code).toBe(-32602);
});
