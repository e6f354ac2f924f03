// Guards against the MCP front door's 2025-11-25 side breaking for a real SDK 1.32.2 client:
// tools from the config, task-augmented calls that are gateway tasks (same row as /v1), polling,
// results, cancel, held calls, and one user reaching another's task.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { waitUntil } from '../helpers/wait';
import { postMcp, useFrontDoor } from './front-door-harness';
import { sdkClient, streamingClient } from '../helpers/mcp-client';

const fd = useFrontDoor();
let alice: Client;
let bob: Client;

beforeAll(async () => {
  alice = await sdkClient(fd.api.url, fd.keys.alice, '?thread=ide-1');
  bob = await sdkClient(fd.api.url, fd.keys.bob);
});

// After the front door's own afterAll has stopped it.
afterAll(async () => {
  await alice?.close();
  await bob?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read JSON bodies by path
async function v1(path: string, key = fd.keys.alice): Promise<{ status: number; body: any }> {
  const res = await fetch(`${fd.api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

it('initialize advertises tasks; tools/list shows exposed toolsets under their MCP names', async () => {
  expect(alice.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
  const { tools } = await alice.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect([...byName.keys()].sort()).toEqual(
    [
      'demo-native',
      'demo-sync',
      'gateway_task_answer',
      'gateway_task_cancel',
      'gateway_task_get',
      'gateway_task_list',
      'quick',
      'report',
      'report_start',
    ].sort(),
  );
  expect(byName.get('demo-native')!.execution?.taskSupport).toBe('required');
  expect(byName.get('quick')!.execution?.taskSupport).toBe('forbidden');
  expect(byName.get('demo-sync')!.execution?.taskSupport).toBe('optional');
  expect(byName.get('demo-sync')!.inputSchema.properties).toHaveProperty('duration_ms');
  expect(byName.get('report')!.description).toMatch(/durable gateway task/);
});

it('a task-augmented call is a gateway task: created, polled, its result fetched', async () => {
  const messages: { type: string; task?: { taskId: string; status: string } }[] = [];
  let result: CallToolResult | undefined;
  const stream = alice.experimental.tasks.callToolStream(
    { name: 'demo-sync', arguments: { duration_ms: 300, result: { answer: 42 } } },
    CallToolResultSchema,
    { task: {} },
  );
  for await (const message of stream) {
    messages.push(message);
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') throw message.error;
  }
  const created = messages.find((m) => m.type === 'taskCreated')!.task!;
  expect(created.taskId).toMatch(/^task_[a-z2-7]{26}$/);
  expect(messages.some((m) => m.type === 'taskStatus')).toBe(true);
  expect(result?.isError).toBeFalsy();
  expect(JSON.stringify(result?.content)).toContain('42');
  // The same row through /v1, in the thread named on the URL.
  const shown = await v1(`/v1/threads/ide-1/tasks/${created.taskId}`);
  expect(shown.status).toBe(200);
  expect(shown.body.status).toBe('completed');
  expect(shown.body.toolset).toBe('demo-sync');
});

it('getTask, listTasks and getTaskResult read the caller own tasks', async () => {
  const created = (await alice.request(
    {
      method: 'tools/call',
      params: { name: 'report', arguments: { duration_ms: 200 }, task: { ttl: 60000 } },
    },
    (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
  )) as { task: { taskId: string; status: string; ttl: number | null } };
  expect(created.task.status).toBe('working');
  const ended = await waitUntil(
    async () => {
      const task = await alice.experimental.tasks.getTask(created.task.taskId);
      return task.status === 'completed' ? task : undefined;
    },
    'the ordinary task to complete',
    30_000,
  );
  expect(ended.taskId).toBe(created.task.taskId);
  const listed = await alice.experimental.tasks.listTasks();
  expect(listed.tasks.map((t) => t.taskId)).toContain(created.task.taskId);
  const result = await alice.experimental.tasks.getTaskResult(
    created.task.taskId,
    CallToolResultSchema,
  );
  expect(result.isError).toBeFalsy();
});

it('cancelTask cancels a running task; a second cancel of the ended task is -32602', async () => {
  const created = await alice.request(
    {
      method: 'tools/call',
      params: { name: 'demo-sync', arguments: { duration_ms: 600_000 }, task: {} },
    },
    (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  await waitUntil(
    async () => {
      const shown = await v1(`/v1/tasks`);
      const row = shown.body.items.find((t: { task_id: string }) => t.task_id === taskId);
      return row?.status === 'working' ? true : undefined;
    },
    'the sync call to start upstream',
    30_000,
  );
  await alice.experimental.tasks.cancelTask(taskId);
  const ended = await waitUntil(
    async () => {
      const task = await alice.experimental.tasks.getTask(taskId);
      return task.status === 'cancelled' ? task : undefined;
    },
    'the task to end cancelled',
    30_000,
  );
  expect(ended.status).toBe('cancelled');
  await expect(alice.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already cancelled/);
});

it('a call without a task is held and answers the result inline', async () => {
  const result = (await alice.callTool({
    name: 'demo-sync',
    arguments: { duration_ms: 300, result: { inline: true } },
  })) as CallToolResult;
  expect(result.isError).toBeFalsy();
  expect(JSON.stringify(result.content)).toContain('inline');
});

it('a task-augmented call to a forbidden tool, or a plain call to a required one, is refused', async () => {
  await expect(
    alice.request(
      { method: 'tools/call', params: { name: 'quick', arguments: {}, task: {} } },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    ),
  ).rejects.toThrow(/does not support task augmentation/);
  await expect(
    alice.request(
      { method: 'tools/call', params: { name: 'demo-native', arguments: {} } },
      CallToolResultSchema,
    ),
  ).rejects.toThrow(/requires task augmentation/);
});

it('bad arguments are -32602 naming the path; nothing is created', async () => {
  const before = (await v1('/v1/tasks')).body.items.length;
  await expect(
    alice.request(
      {
        method: 'tools/call',
        params: { name: 'demo-sync', arguments: { duration_ms: 'x' }, task: {} },
      },
      (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
    ),
  ).rejects.toThrow(/duration_ms/);
  expect((await v1('/v1/tasks')).body.items.length).toBe(before);
});

it("another user's task answers not found on every method, like one that never existed", async () => {
  const created = await alice.request(
    {
      method: 'tools/call',
      params: { name: 'demo-sync', arguments: { duration_ms: 100 }, task: {} },
    },
    (await import('@modelcontextprotocol/sdk/types.js')).CreateTaskResultSchema,
  );
  const mine = created.task.taskId;
  const never = 'task_aaaaaaaaaaaaaaaaaaaaaaaaaa';
  const outcomes = async (taskId: string): Promise<string[]> => {
    const attempts = [
      bob.experimental.tasks.getTask(taskId),
      bob.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      bob.experimental.tasks.cancelTask(taskId),
      bob.callTool({ name: 'gateway_task_get', arguments: { task_id: taskId } }),
    ];
    const settled = await Promise.allSettled(attempts);
    return settled.map((s) =>
      s.status === 'rejected'
        ? String((s.reason as Error).message).replace(taskId, '<id>')
        : JSON.stringify(s.value).replace(taskId, '<id>'),
    );
  };
  expect(await outcomes(mine)).toEqual(await outcomes(never));
  expect((await outcomes(mine))[0]).toMatch(/Task not found/);
  const listed = await bob.experimental.tasks.listTasks();
  expect(listed.tasks.map((t) => t.taskId)).not.toContain(mine);
  const companionList = await bob.callTool({ name: 'gateway_task_list', arguments: {} });
  expect(JSON.stringify(companionList)).not.toContain(mine);
});

it('companion tools: start answers a task ID at once; get reads it to its result', async () => {
  const started = (await alice.callTool({
    name: 'report_start',
    arguments: { duration_ms: 200 },
  })) as CallToolResult;
  const taskId = (started.structuredContent as { task_id: string }).task_id;
  expect(taskId).toMatch(/^task_/);
  const done = await waitUntil(
    async () => {
      const got = (await alice.callTool({
        name: 'gateway_task_get',
        arguments: { task_id: taskId },
      })) as CallToolResult;
      const status = (got.structuredContent as { status: string }).status;
      return status === 'completed' ? got : undefined;
    },
    'the started task to complete',
    30_000,
  );
  expect(done.isError).toBeFalsy();
  const listed = (await alice.callTool({
    name: 'gateway_task_list',
    arguments: {},
  })) as CallToolResult;
  expect(JSON.stringify(listed.structuredContent)).toContain(taskId);
});

type Seen = { taskId: string; status: string; ttl?: unknown };

it('the GET stream notifies the caller of status changes in its thread, and nobody else', async () => {
  const opened = await Promise.all([
    streamingClient(fd.api.url, fd.keys.alice, '?thread=notify'),
    streamingClient(fd.api.url, fd.keys.bob, '?thread=notify'),
  ]);
  const [a, b] = opened.map(({ client }) => {
    const seen: Seen[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => {
      seen.push(n.params);
    });
    return { client, seen };
  });
  expect(await opened[0].streamOpen).toBe(200);
  expect(await opened[1].streamOpen).toBe(200);
  const create = async (client: Client) =>
    (
      await client.request(
        {
          method: 'tools/call',
          params: { name: 'demo-sync', arguments: { duration_ms: 200 }, task: {} },
        },
        CreateTaskResultSchema,
      )
    ).task.taskId;
  const ended = (seen: Seen[], taskId: string) => () =>
    seen.find((n) => n.taskId === taskId && n.status === 'completed');
  const mine = await create(a.client);
  const done = await waitUntil(ended(a.seen, mine), 'the completed notification', 30_000);
  expect(done.ttl).toEqual(expect.any(Number));
  const statuses = a.seen.filter((n) => n.taskId === mine).map((n) => n.status);
  expect(statuses[0]).toBe('working');
  expect(statuses.at(-1)).toBe('completed');
  // Bob's stream, on the same thread name, carries his own task and never Alice's, though hers
  // ended before his was created (the stream is in commit order).
  const his = await create(b.client);
  await waitUntil(ended(b.seen, his), "Bob's completed notification", 30_000);
  expect(b.seen.map((n) => n.taskId)).not.toContain(mine);
  await Promise.all([a.client.close(), b.client.close()]);
});

it('GET /mcp without a token is 401, and for the 2026 revision it is 405', async () => {
  const get = (headers: Record<string, string>) =>
    fetch(`${fd.api.url}/mcp`, { headers: { accept: 'text/event-stream', ...headers } });
  expect((await get({})).status).toBe(401);
  const modern = await get({
    authorization: `Bearer ${fd.keys.alice}`,
    'mcp-protocol-version': '2026-07-28',
  });
  expect(modern.status).toBe(405);
  const bad = await postMcp(fd.api.url, { jsonrpc: '2.0', method: 'ping' }, {});
  expect(bad.status).toBe(401);
});
