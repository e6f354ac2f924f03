// Guards against a client being unable to answer a task's questions through the front door.
// 2025-11-25: on tasks/result the front door must send each question as the request it is
// (elicitation/create) with the related-task _meta, and the client's answer must reach the
// upstream through the durable input path, through a real poller, both for questions a task asks
// and for the rounds an upstream asks before it makes a task. 2026-07-28: those pre-task rounds
// must come back as multi-round-trip rounds (no task yet), and the retry must create the task
// with the answers, and a task's questions must be answerable through tasks/update in two goes.
// And against another user answering them. The upstream is a strict 2026-07-28 server (it
// refuses initialize), pinned.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { waitUntil } from '../helpers/wait';
import { postMcp, postMcp2026, useFrontDoor } from './front-door-harness';
import { streamingClient } from '../helpers/mcp-client';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const fd = useFrontDoor({
  server: { protocolVersion: '2026-07-28' },
  demoArgs: ['--strict-2026'],
  toolsets: [
    { name: 'ask-two', contract: 'mcp-tasks', tool: 'demo_ask_two', mcp: { toolName: 'ask' } },
    { name: 'mrtr', contract: 'mcp-tasks', tool: 'demo_mrtr', mcp: { toolName: 'approve' } },
  ],
});

/** A client that answers every elicitation with `answer(request)` and records the requests. */
async function answeringClient(
  key: string,
  answer: (request: ElicitRequest) => Record<string, unknown>,
): Promise<{ client: Client; asked: ElicitRequest[] }> {
  const { client } = await streamingClient(fd.api.url, key, '?thread=asks', { elicitation: {} });
  const asked: ElicitRequest[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request);
    return answer(request);
  });
  return { client, asked };
}

/** Runs a task-augmented call the way SDK clients do: create, poll, tasks/result. */
async function runAsTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ taskId: string; statuses: string[]; result: CallToolResult }> {
  let taskId = '';
  const statuses: string[] = [];
  let result: CallToolResult | undefined;
  const stream = client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { task: {}, timeout: 120_000 },
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') taskId = message.task.taskId;
    if (message.type === 'taskStatus') statuses.push(message.task.status);
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') throw message.error;
  }
  return { taskId, statuses, result: result! };
}

it("a task's questions reach the client on tasks/result; its answers reach the upstream", async () => {
  const { client, asked } = await answeringClient(fd.keys.alice, (request) => {
    const schema = 'requestedSchema' in request.params ? request.params.requestedSchema : undefined;
    const field = Object.keys(schema?.properties ?? {})[0];
    return { action: 'accept', content: { [field]: field === 'name' ? 'Luca' : true } };
  });
  const run = await runAsTask(client, 'ask', { ask_after_ms: 100, duration_ms: 100 });
  expect(run.statuses).toContain('input_required');
  expect(asked.map((r) => r.params.message).sort()).toEqual([
    'Continue the demo task?',
    'Which name should the demo task use?',
  ]);
  for (const request of asked) {
    expect(request.params._meta?.[RELATED_TASK]).toEqual({ taskId: run.taskId });
  }
  expect(run.result.isError).toBeFalsy();
  expect(run.result.structuredContent).toMatchObject({
    answers: {
      name: { action: 'accept', content: { name: 'Luca' } },
      confirm: { action: 'accept', content: { confirm: true } },
    },
  });
  // The same answers, stored as any answer is: /v1 shows them on the task.
  const res = await fetch(`${fd.api.url}/v1/threads/asks/tasks/${run.taskId}`, {
    headers: { authorization: `Bearer ${fd.keys.alice}` },
  });
  expect(((await res.json()) as { status: string }).status).toBe('completed');
  await client.close();
});

it('questions an upstream asks before it makes a task are answered the same way', async () => {
  const { client, asked } = await answeringClient(fd.keys.alice, () => ({
    action: 'accept',
    content: { approve: true },
  }));
  const run = await runAsTask(client, 'approve', { duration_ms: 100 });
  expect(asked).toHaveLength(1);
  expect(asked[0].params.message).toBe('Approve this demo run?');
  expect(run.result.structuredContent).toMatchObject({ approved: true });
  await client.close();
});

it('a held call (no task) sends its questions to the client as requests of the call', async () => {
  const { client, asked } = await answeringClient(fd.keys.alice, () => ({
    action: 'accept',
    content: { approve: true },
  }));
  const result = (await client.callTool(
    { name: 'approve', arguments: { duration_ms: 100 } },
    CallToolResultSchema,
    { timeout: 120_000 },
  )) as CallToolResult;
  expect(asked).toHaveLength(1);
  expect(asked[0].params._meta?.[RELATED_TASK]).toBeUndefined();
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ approved: true });
  await client.close();
});

it("an answer to another user's question, or to a request never sent, is refused and stores nothing", async () => {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let question: ElicitRequest | undefined;
  let sentId: string | number | undefined;
  const { client } = await streamingClient(fd.api.url, fd.keys.alice, '?thread=asks', {
    elicitation: {},
  });
  // Alice's handler holds its answer until Bob has tried his.
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    question = request;
    sentId = extra.requestId;
    await held;
    return { action: 'accept', content: { approve: true } };
  });
  const running = runAsTask(client, 'approve', { duration_ms: 100 });
  await waitUntil(() => question, 'the question to reach Alice', 60_000);
  const answerAs = (key: string, id: unknown) =>
    postMcp(
      fd.api.url,
      { jsonrpc: '2.0', id, result: { action: 'accept', content: { approve: false } } },
      { authorization: `Bearer ${key}` },
    );
  const bob = await answerAs(fd.keys.bob, sentId);
  expect(bob.status).toBe(400);
  expect(bob.body.error.message).toMatch(/Task not found/);
  const forged = await answerAs(fd.keys.alice, 'not-an-id-we-sent');
  expect(forged.status).toBe(400);
  release();
  const run = await running;
  // Alice's own answer is the one the upstream acted on.
  expect(run.result.structuredContent).toMatchObject({ approved: true });
  await client.close();
});

/** One declaring 2026-07-28 request with the headers a conforming client sends. */
function call2026(method: string, params: Record<string, unknown>, key = fd.keys.alice) {
  return postMcp2026(fd.api.url, key, method, params);
}

it('2026: questions before a task exist are a round; the retry with the answers makes the task', async () => {
  const first = await call2026('tools/call', { name: 'approve', arguments: { duration_ms: 100 } });
  const round = first.body.result;
  expect(round.resultType).toBe('input_required');
  expect(round.taskId).toBeUndefined();
  expect(Object.keys(round.inputRequests)).toEqual(['approval']);
  expect(round.inputRequests.approval.method).toBe('elicitation/create');
  expect(typeof round.requestState).toBe('string');
  const retry = (key: string, requestState: unknown, name = 'approve') =>
    call2026(
      'tools/call',
      {
        name,
        arguments: { duration_ms: 100 },
        inputResponses: { approval: { action: 'accept', content: { approve: true } } },
        requestState,
      },
      key,
    );
  // Bob cannot continue Alice's round, nor can a state this server never issued, nor another tool.
  for (const [key, state, name] of [
    [fd.keys.bob, round.requestState, 'approve'],
    [fd.keys.alice, 'gateway-round:bm9wZQ', 'approve'],
    [fd.keys.alice, round.requestState, 'ask'],
  ]) {
    const refused = await retry(key, state, name);
    expect(refused.body.error).toMatchObject({ code: -32602 });
  }
  const created = (await retry(fd.keys.alice, round.requestState)).body.result;
  expect(created.resultType).toBe('task');
  expect(created.requestState).toBeUndefined();
  expect(created.inputRequests).toBeUndefined();
  const ended = await waitUntil(
    async () => {
      const got = (await call2026('tasks/get', { taskId: created.taskId })).body.result;
      return got.status === 'completed' ? got : undefined;
    },
    'the task made after the round to complete',
    60_000,
  );
  expect(ended.result.structuredContent).toMatchObject({ approved: true });
});

it("2026: a task's questions answered through tasks/update in two goes reach the upstream once each", async () => {
  const tag = `fd-update-${process.pid}`;
  const created = (await call2026('tools/call', { name: 'ask', arguments: { tag } })).body.result;
  expect(created.resultType).toBe('task');
  const taskId = created.taskId as string;
  const asking = (keys: number) =>
    waitUntil(
      async () => {
        const got = (await call2026('tasks/get', { taskId })).body.result;
        const open = Object.keys(got.inputRequests ?? {});
        return got.status === 'input_required' && open.length === keys ? open.sort() : undefined;
      },
      `${keys} question(s) open`,
      60_000,
    );
  expect(await asking(2)).toEqual(['confirm', 'name']);
  const name = { action: 'accept', content: { name: 'Ada' } };
  const first = await call2026('tasks/update', { taskId, inputResponses: { name } });
  expect(first.body.error).toBeUndefined();
  expect(await asking(1)).toEqual(['confirm']);
  const confirm = { action: 'accept', content: { confirm: true } };
  const second = await call2026('tasks/update', { taskId, inputResponses: { confirm } });
  expect(second.body.error).toBeUndefined();
  const done = await waitUntil(
    async () => {
      const got = (await call2026('tasks/get', { taskId })).body.result;
      return got.status === 'completed' ? got : undefined;
    },
    'the task to complete',
    60_000,
  );
  expect(done.result.structuredContent).toMatchObject({ answers: { name, confirm } });
  expect((await fd.demo.stats(tag)).by_tag[tag]).toMatchObject({
    answers: { name: 1, confirm: 1 },
  });
});
