// Guards against a plain MCP client destroying the durable task it started: an SDK 1.x client
// calls a tool that outlives its request timeout, without a task; the held call must answer
// before that timeout with a result naming the task, no cancel may follow, and the task must end
// completed with its result readable over /mcp and /v1 (docs/mcp.md, "Held calls").
// The shipped scale is a 45 s hold (MCP_MAX_HOLD_MS) under the SDK's default 60 s timeout, which
// the first test pins; the call itself runs the same rule at a smaller scale (a 4 s hold, an 8 s
// client timeout, a 12 s tool), so the file takes seconds, not the 100 s of a 90 s tool.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { parseSettings } from '@app/config';
import { recordingFetch, sdkClient } from '../helpers/mcp-client';
import { waitUntil } from '../helpers/wait';
import { postMcp2026, useFrontDoor } from './front-door-harness';

const HOLD_MS = 4000;
const CLIENT_TIMEOUT_MS = 8000;
const TOOL_MS = 12_000;

const fd = useFrontDoor({ apiEnv: { MCP_MAX_HOLD_MS: String(HOLD_MS) } });
let client: Client;
const recorder = recordingFetch();

beforeAll(async () => {
  client = await sdkClient(fd.api.url, fd.keys.alice, '?thread=long-call', {
    capabilities: {},
    fetch: recorder.fetch,
  });
});

// After the front door's own afterAll has stopped it.
afterAll(async () => {
  await client?.close();
});

it('the shipped hold answers inside the SDK default timeout, with room for the trip', () => {
  const shipped = parseSettings({ DATABASE_URL: 'postgres://localhost/x' }).mcp.maxHoldMs;
  expect(DEFAULT_REQUEST_TIMEOUT_MSEC - shipped).toBeGreaterThanOrEqual(10_000);
});

it('a tool longer than the client timeout: answered before it, never cancelled, result reachable', async () => {
  const started = Date.now();
  const held = (await client.callTool(
    {
      name: 'report',
      arguments: { duration_ms: TOOL_MS, result: { report: 'twelve seconds' } },
    },
    undefined,
    { timeout: CLIENT_TIMEOUT_MS },
  )) as CallToolResult;
  const heldFor = Date.now() - started;
  expect(heldFor).toBeLessThan(CLIENT_TIMEOUT_MS);
  expect(heldFor).toBeGreaterThanOrEqual(HOLD_MS - 100);
  expect(held.isError).toBeFalsy();
  const named = held.structuredContent as { task_id: string; status: string; result_path: string };
  expect(named.status).toBe('working');
  const text = (held.content[0] as { text: string }).text;
  expect(text).toContain(named.task_id);
  expect(text).toContain('gateway_task_get');
  expect(text).toContain(`tasks/get (and tasks/result) with taskId "${named.task_id}"`);
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
  expect(JSON.stringify(ended.result)).toContain('twelve seconds');

  // Over /mcp, from the same plain client: the companion tool, and tasks/result by its ID.
  const got = (await client.callTool({
    name: 'gateway_task_get',
    arguments: { task_id: named.task_id },
  })) as CallToolResult;
  expect(got.isError).toBeFalsy();
  expect(JSON.stringify(got.structuredContent)).toContain('twelve seconds');
  const result = await client.request(
    { method: 'tasks/result', params: { taskId: named.task_id } },
    CallToolResultSchema,
  );
  expect(JSON.stringify(result)).toContain('twelve seconds');

  // The client never gave up, so it never sent a cancel of any kind.
  const methods = recorder.sent.map((s) => s.message.method);
  expect(methods).not.toContain('notifications/cancelled');
  expect(methods).not.toContain('tasks/cancel');
}, 60_000);

it('a 2026-07-28 call held past the hold is told to read the task by tasks/get, which it has', async () => {
  // tasks/result is gone from 2026-07-28 (-32601): the answer must not send the client there.
  const held = await postMcp2026(
    fd.api.url,
    fd.keys.alice,
    'tools/call',
    { name: 'report', arguments: { duration_ms: TOOL_MS, result: { report: 'held 2026' } } },
    { declare: false },
  );
  expect(held.status).toBe(200);
  const result = held.body.result as {
    structuredContent: { task_id: string; status: string };
    content: Array<{ text: string }>;
  };
  expect(result.structuredContent.status).toBe('working');
  const text = result.content[0].text;
  expect(text).toContain(`tasks/get with taskId "${result.structuredContent.task_id}"`);
  expect(text).not.toContain('tasks/result');
  const missing = await postMcp2026(fd.api.url, fd.keys.alice, 'tasks/result', {
    taskId: result.structuredContent.task_id,
  });
  expect(missing.body.error).toMatchObject({ code: -32601 });
}, 60_000);
