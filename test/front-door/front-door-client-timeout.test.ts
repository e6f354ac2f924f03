// Guards against a plain MCP client destroying the durable task it started: an SDK 1.x client on
// its default options (60 s request timeout) calls a 90 s tool without a task; the held call must
// answer before that timeout with a result naming the task, no cancel may follow, and the task
// must end completed with its result readable over /mcp and /v1 (docs/mcp.md, "Held calls").
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { recordingFetch, sdkClient } from '../helpers/mcp-client';
import { waitUntil } from '../helpers/wait';
import { FrontDoor, startFrontDoor } from './front-door-harness';

const TOOL_MS = 90_000;
const SDK_DEFAULT_TIMEOUT_MS = 60_000;

let fd: FrontDoor;
let client: Client;
const recorder = recordingFetch();

beforeAll(async () => {
  // The API on its defaults: the hold limit under test is the shipped one.
  fd = await startFrontDoor();
  client = await sdkClient(fd.api.url, fd.keys.alice, '?thread=long-call', {
    capabilities: {},
    fetch: recorder.fetch,
  });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await fd?.close();
});

it('a 90 s tool called on SDK defaults: answered before the timeout, never cancelled, result reachable', async () => {
  const started = Date.now();
  const held = (await client.callTool({
    name: 'report',
    arguments: { duration_ms: TOOL_MS, result: { report: 'ninety seconds' } },
  })) as CallToolResult;
  const heldFor = Date.now() - started;
  expect(heldFor).toBeLessThan(SDK_DEFAULT_TIMEOUT_MS);
  expect(heldFor).toBeGreaterThan(30_000);
  expect(held.isError).toBeFalsy();
  const named = held.structuredContent as { task_id: string; status: string; result_path: string };
  expect(named.status).toBe('working');
  const text = (held.content[0] as { text: string }).text;
  expect(text).toContain(named.task_id);
  expect(text).toContain('gateway_task_get');
  expect(text).toContain('tasks/get');
  expect(text).toContain(`/v1/threads/long-call/tasks/${named.task_id}`);
  expect(named.result_path).toBe(`/v1/threads/long-call/tasks/${named.task_id}`);

  const v1 = async (): Promise<{ status: string; result?: unknown }> => {
    const res = await fetch(`${fd.api.url}${named.result_path}`, {
      headers: { authorization: `Bearer ${fd.keys.alice}` },
    });
    return (await res.json()) as { status: string; result?: unknown };
  };
  const ended = await waitUntil(
    async () => {
      const task = await v1();
      return task.status === 'completed' || task.status === 'cancelled' ? task : undefined;
    },
    'the task to end',
    TOOL_MS,
  );
  expect(ended.status).toBe('completed');
  expect(JSON.stringify(ended.result)).toContain('ninety seconds');

  // Over /mcp, from the same plain client: the companion tool, and tasks/result by its ID.
  const got = (await client.callTool({
    name: 'gateway_task_get',
    arguments: { task_id: named.task_id },
  })) as CallToolResult;
  expect(got.isError).toBeFalsy();
  expect(JSON.stringify(got.structuredContent)).toContain('ninety seconds');
  const result = await client.request(
    { method: 'tasks/result', params: { taskId: named.task_id } },
    CallToolResultSchema,
  );
  expect(JSON.stringify(result)).toContain('ninety seconds');

  // The client never gave up, so it never sent a cancel of any kind.
  const methods = recorder.sent.map((s) => s.message.method);
  expect(methods).not.toContain('notifications/cancelled');
  expect(methods).not.toContain('tasks/cancel');
}, 180_000);
