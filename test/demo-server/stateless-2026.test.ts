// Guards against the demo server's MCP 2026-07-28 side (SEP-2663 tasks) drifting from docs/demo-server.md.
import { waitForStatus, waitUntil } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import { connectHttp, useDemoProcesses } from './demo-process.helper';
import { callTool, getTask, ok2026, post2026, TASKS_EXTENSION } from './stateless-2026.helper';
import { request2026 } from '../helpers/mcp-2026';

useDemoProcesses();

describe('demo server, MCP 2026-07-28', () => {
  it('serves server/discover and the 2025-11-25 SDK path on the same endpoint', async () => {
    const { url } = await startDemoServer();
    const discover = await ok2026(url, 'server/discover');
    expect(discover).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-task-gateway-demo-server' } },
    });
    expect(discover.capabilities.tasks).toBeUndefined();
    const names = (await ok2026(url, 'tools/list')).tools.map(
      (tool: { name: string }) => tool.name,
    );
    expect(names).toEqual(
      expect.arrayContaining(['greet', 'slow_compute', 'demo_task', 'demo_mrtr']),
    );

    const legacy = await connectHttp(url);
    expect(legacy.getServerCapabilities()?.tasks?.requests?.tools?.call).toBeDefined();
    const { tools } = await legacy.listTools();
    expect(tools.map((tool) => tool.name)).toContain('demo_task_required');
  });

  it('runs demo_task as a task that tasks/get reads to completion', async () => {
    const { url } = await startDemoServer();
    const created = await callTool(url, 'demo_task', { duration_ms: 300, poll_interval_ms: 50 });
    expect(created).toMatchObject({ resultType: 'task', status: 'working', pollIntervalMs: 50 });
    expect(created).not.toHaveProperty('result');
    const working = await getTask(url, created.taskId);
    expect(working).toMatchObject({ resultType: 'complete', taskId: created.taskId });
    const done = await waitForStatus(() => getTask(url, created.taskId), 'completed');
    expect(done.result.structuredContent.echo).toMatchObject({ duration_ms: 300 });
    expect(done.result.isError).toBeUndefined();
  });

  it('keeps two questions pending until both are answered, each accepted once', async () => {
    const { url } = await startDemoServer();
    const { taskId } = await callTool(url, 'demo_ask_two', { tag: 'two', resume_ms: 0 });
    const waiting = await waitForStatus(() => getTask(url, taskId), 'input_required');
    expect(Object.keys(waiting.inputRequests).sort()).toEqual(['confirm', 'name']);
    expect(waiting.inputRequests.name.method).toBe('elicitation/create');

    const name = { action: 'accept', content: { name: 'Luca' } };
    expect(await ok2026(url, 'tasks/update', { taskId, inputResponses: { name } })).toEqual({
      resultType: 'complete',
    });
    const partial = await getTask(url, taskId);
    expect(partial.status).toBe('input_required');
    expect(Object.keys(partial.inputRequests)).toEqual(['confirm']);

    // A repeated answer and an unknown key are acknowledged and ignored.
    const again = { name: { action: 'accept', content: { name: 'Other' } }, nope: {} };
    await ok2026(url, 'tasks/update', { taskId, inputResponses: again });
    const confirm = { action: 'accept', content: { confirm: true } };
    await ok2026(url, 'tasks/update', { taskId, inputResponses: { confirm } });
    const done = await waitForStatus(() => getTask(url, taskId), 'completed');
    expect(done.result.structuredContent.answers).toEqual({ name, confirm });

    const stats = await callTool(url, 'demo_stats', { tag: 'two' });
    expect(stats.structuredContent.by_tag.two).toMatchObject({
      submits: 1,
      state: 'completed',
      answers: { name: 1, confirm: 1 },
    });
    expect(stats.structuredContent.tasks_2026).toMatchObject({ answers: 2, ignored_answers: 2 });
  });

  it('answers demo_mrtr with input_required before any task, then a task on the retry', async () => {
    const { url } = await startDemoServer();
    const round1 = await callTool(url, 'demo_mrtr', { duration_ms: 100 });
    expect(round1.resultType).toBe('input_required');
    expect(round1).not.toHaveProperty('taskId');
    expect(Object.keys(round1.inputRequests)).toEqual(['approval']);
    const inputResponses = { approval: { action: 'accept', content: { approve: true } } };

    const noState = await post2026(url, 'tools/call', {
      name: 'demo_mrtr',
      arguments: { duration_ms: 100 },
      inputResponses,
    });
    expect(noState.error?.code).toBe(-32602);

    const round2 = await callTool(
      url,
      'demo_mrtr',
      { duration_ms: 100 },
      { inputResponses, requestState: round1.requestState },
    );
    expect(round2).toMatchObject({ resultType: 'task' });
    expect(round2).not.toHaveProperty('requestState');
    const done = await waitForStatus(() => getTask(url, round2.taskId), 'completed');
    expect(done.result.structuredContent).toMatchObject({ approved: true });
  });

  it('ends a tool error completed with isError and a protocol error failed with its error', async () => {
    const { url } = await startDemoServer();
    const toolError = await callTool(url, 'demo_tool_error', {
      duration_ms: 50,
      fail_message: 'no',
    });
    const protocolError = await callTool(url, 'demo_protocol_error', { duration_ms: 50 });
    const completed = await waitForStatus(() => getTask(url, toolError.taskId), 'completed');
    expect(completed.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'no' }],
    });
    const failed = await waitForStatus(() => getTask(url, protocolError.taskId), 'failed');
    expect(failed.error.code).toBe(-32603);
    expect(failed).not.toHaveProperty('result');
  });

  it('cancels demo_long, acks a repeated cancel, and answers -32602 for unknown tasks', async () => {
    const { url } = await startDemoServer();
    const { taskId } = await callTool(url, 'demo_long', { tag: 'long' });
    expect(await ok2026(url, 'tasks/cancel', { taskId })).toEqual({ resultType: 'complete' });
    expect((await getTask(url, taskId)).status).toBe('cancelled');
    expect(await ok2026(url, 'tasks/cancel', { taskId })).toEqual({ resultType: 'complete' });
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
      const unknown = await post2026(url, method, { taskId: 'no-such-task', inputResponses: {} });
      expect(unknown.error?.code).toBe(-32602);
    }
  });

  it('forgets a task after its ttlMs and after a restart', async () => {
    const first = await startDemoServer();
    const short = await callTool(first.url, 'demo_long', { ttl_ms: 300 });
    expect(short.ttlMs).toBe(300);
    const lasting = await callTool(first.url, 'demo_long', {});
    await waitUntil(async () => {
      const answer = await post2026(first.url, 'tasks/get', { taskId: short.taskId });
      return answer.error?.code === -32602 ? true : undefined;
    }, 'the short task to expire');
    expect((await getTask(first.url, lasting.taskId)).status).toBe('working');
    await first.stop();
    const second = await startDemoServer();
    const lost = await post2026(second.url, 'tasks/get', { taskId: lasting.taskId });
    expect(lost.error?.code).toBe(-32602);
  });

  it('runs demo_task_required and demo_task_optional on the 2025 job timeline', async () => {
    const { url } = await startDemoServer();
    // A 3 s question: a Node 24 run on a loaded 2-core machine read the task first after a
    // 400 ms window had passed and only ever saw it completed.
    const failing = await callTool(url, 'demo_task_required', {
      duration_ms: 3200,
      outcome: 'fail',
      fail_message: 'broke',
      input_required_after_ms: 0,
      input_required_for_ms: 3000,
      tag: 'job26',
    });
    const waiting = await waitForStatus(() => getTask(url, failing.taskId), 'input_required');
    expect(Object.keys(waiting.inputRequests)).toEqual(['input']);
    const ended = await waitForStatus(() => getTask(url, failing.taskId), 'completed');
    expect(ended.result).toMatchObject({ isError: true, content: [{ text: 'broke' }] });

    const long = await callTool(url, 'demo_task_optional', { duration_ms: 600_000, tag: 'job26' });
    await ok2026(url, 'tasks/cancel', { taskId: long.taskId });
    expect((await getTask(url, long.taskId)).status).toBe('cancelled');
    const stats = await callTool(url, 'demo_stats', { tag: 'job26' });
    expect(stats.structuredContent.by_tag.job26).toMatchObject({
      submits: 2,
      cancels: 1,
      state: 'cancelled',
    });

    const sync = await post2026(
      url,
      'tools/call',
      { name: 'demo_task_optional', arguments: { duration_ms: 50, result: { ok: true } } },
      { declare: false },
    );
    expect(sync.result).toMatchObject({ resultType: 'complete', structuredContent: { ok: true } });
  });

  it('answers resultType complete without a task when the server chooses to', async () => {
    const { url } = await startDemoServer();
    const immediate = await callTool(url, 'demo_task', { immediate: true, result: { x: 1 } });
    expect(immediate).toMatchObject({ resultType: 'complete', structuredContent: { x: 1 } });
    const sync = await post2026(
      url,
      'tools/call',
      {
        name: 'demo_task',
        arguments: { duration_ms: 50 },
      },
      { declare: false },
    );
    expect(sync.result).toMatchObject({ resultType: 'complete' });
    expect(sync.result).not.toHaveProperty('taskId');
  });

  it('rejects header, version and capability errors with the codes the spec gives', async () => {
    const { url } = await startDemoServer();
    const { taskId } = await callTool(url, 'demo_long', {});
    const cases: Array<
      [string, Promise<{ status: number; error?: { code: number } }>, number, number]
    > = [
      [
        'missing Mcp-Name',
        post2026(url, 'tasks/get', { taskId }, { headers: { 'mcp-name': null } }),
        400,
        -32020,
      ],
      [
        'wrong Mcp-Method',
        post2026(url, 'tasks/get', { taskId }, { headers: { 'mcp-method': 'tools/list' } }),
        400,
        -32020,
      ],
      [
        'base64 Mcp-Name',
        post2026(
          url,
          'tasks/get',
          { taskId },
          { headers: { 'mcp-name': `=?base64?${Buffer.from(taskId).toString('base64')}?=` } },
        ),
        200,
        0,
      ],
      [
        'unknown version',
        post2026(url, 'tools/list', {}, { protocolVersion: '2099-01-01' }),
        400,
        -32022,
      ],
      [
        'undeclared tasks/get',
        post2026(url, 'tasks/get', { taskId }, { declare: false }),
        400,
        -32021,
      ],
      [
        'undeclared required tool',
        post2026(url, 'tools/call', { name: 'failing_job', arguments: {} }, { declare: false }),
        400,
        -32021,
      ],
      ['removed tasks/list', post2026(url, 'tasks/list'), 404, -32601],
    ];
    for (const [what, pending, status, code] of cases) {
      const answer = await pending;
      expect({ what, status: answer.status, code: answer.error?.code ?? 0 }).toEqual({
        what,
        status,
        code,
      });
    }
  });
});

/** One SSE event of a 2026-07-28 answer: a notification or the response. */
interface Event2026 {
  id?: string | number;
  method?: string;
  params?: { progressToken?: unknown };
  result?: unknown;
}

describe('demo server, --strict-2026 and --only-2025', () => {
  const INITIALIZE = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'demo-test', version: '1.0.0' },
    },
  };
  const postRaw = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('strict: refuses every 2025-11-25 request as a 2026-07-28-only server does', async () => {
    const { url } = await startDemoServer(['--strict-2026']);
    const refused = await postRaw(url, INITIALIZE);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: -32020, message: 'MCP-Protocol-Version header is missing' },
    });
    // The SDK's own 2025-11-25 client cannot open a session.
    await expect(connectHttp(url)).rejects.toThrow(/-32020/);
    const wrongEra = await postRaw(url, INITIALIZE, { 'mcp-protocol-version': '2025-11-25' });
    expect(wrongEra.status).toBe(400);
    expect(await wrongEra.json()).toMatchObject({ error: { code: -32022 } });
    expect((await fetch(`${url}/mcp`)).status).toBe(405);
    // The 2026-07-28 side is whole: discover, tools/list and a task.
    await expect(ok2026(url, 'server/discover')).resolves.toMatchObject({
      capabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
    const created = await callTool(url, 'demo_task', { duration_ms: 100, poll_interval_ms: 50 });
    const done = await waitForStatus(() => getTask(url, created.taskId), 'completed');
    expect(done.result.structuredContent.echo).toMatchObject({ duration_ms: 100 });
  });

  it('/mcp-2026 beside /mcp: the strict endpoint in one process, with the ordinary tools', async () => {
    const { url } = await startDemoServer([]);
    const refused = await fetch(`${url}/mcp-2026`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(INITIALIZE),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: -32020 } });
    expect((await fetch(`${url}/mcp-2026`)).status).toBe(405);
    const submitted = await post2026(
      url,
      'tools/call',
      { name: 'demo_submit', arguments: {} },
      { path: '/mcp-2026' },
    );
    expect(submitted.result).toMatchObject({ structuredContent: { status: 'running' } });
    // demo_slow asked for progress: the answer becomes SSE, progress events first, then the
    // response; asked without a token it stays one JSON answer.
    const held = request2026(
      'tools/call',
      { name: 'demo_slow', arguments: { duration_ms: 250 }, _meta: { progressToken: 'p1' } },
      { declare: false },
    );
    const streamed = await fetch(`${url}/mcp-2026`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...held.headers,
      },
      body: JSON.stringify(held.body),
    });
    expect(streamed.headers.get('content-type')).toBe('text/event-stream');
    const events = (await streamed.text())
      .split('\n\n')
      .filter((block) => block.startsWith('event: message'))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Event2026);
    const progress = events.filter((e) => e.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((e) => e.params?.progressToken === 'p1')).toBe(true);
    expect(events.at(-1)).toMatchObject({
      id: held.body.id,
      result: { resultType: 'complete', structuredContent: { echo: { duration_ms: 250 } } },
    });
    const plain = await post2026(
      url,
      'tools/call',
      { name: 'demo_slow', arguments: { duration_ms: 10 } },
      { path: '/mcp-2026', declare: false },
    );
    expect(plain.result).toMatchObject({ resultType: 'complete' });
    expect(plain.result?.isError).toBeUndefined();
    // /mcp still opens sessions in the same process.
    await expect(connectHttp(url)).resolves.toBeDefined();
  });

  it('only-2025: server/discover gets what a 2025-11-25 server answers, sessions work', async () => {
    const { url } = await startDemoServer(['--only-2025']);
    const discover = await post2026(url, 'server/discover');
    expect(discover.status).toBe(400);
    expect(discover.error?.code).toBe(-32000);
    const legacy = await connectHttp(url);
    expect((await legacy.listTools()).tools.map((tool) => tool.name)).toContain(
      'demo_task_required',
    );
  });
});
