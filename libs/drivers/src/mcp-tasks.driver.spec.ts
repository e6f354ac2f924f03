// Guards the native-task driver: params.task only where declared, session binding, lost tasks.
import { Contract, TaskErrorCode, TaskStatus, TransientTaskError } from '@app/common';
import type { ToolsetConfig } from '@app/config';
import { UpstreamRpcError, UpstreamSessionExpiredError } from '@app/upstream';
import { McpTasksDriver } from './mcp-tasks.driver';
import { FakeUpstream, context, serverConfig } from './testing/fake-upstream';

const TOOLSET: ToolsetConfig = {
  name: 'native',
  server: 'demo',
  contract: Contract.McpTasks,
  tool: 'demo_task_required',
  ttlMs: 60000,
  retryOnCrash: false,
};
const CAPS = { tasks: { requests: { tools: { call: {} } } } };
const task = (status: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  taskId: 't1',
  status,
  ttl: 60000,
  createdAt: 'x',
  lastUpdatedAt: 'x',
  ...extra,
});
const notFound = (): never => {
  throw new UpstreamRpcError('demo', -32602, 'Task not found');
};

describe('McpTasksDriver', () => {
  let upstream: FakeUpstream;
  let driver: McpTasksDriver;

  beforeEach(() => {
    upstream = new FakeUpstream();
    upstream.capabilities = CAPS;
    upstream.serverStatus = {
      server: 'demo',
      state: 'ready',
      capabilities: CAPS,
      tools: [
        {
          name: 'demo_task_required',
          inputSchema: { type: 'object' },
          execution: { taskSupport: 'required' },
        },
        { name: 'demo_echo', inputSchema: { type: 'object' } },
      ],
    };
    driver = new McpTasksDriver(upstream);
  });

  it('submits tools/call with params.task {ttl} on the task session and stores the binding', async () => {
    upstream.handler = () => ({ task: task('working', { pollInterval: 200 }) });
    const outcome = await driver.submit(context(TOOLSET, { input: { x: 1 } }));
    expect(upstream.calls).toMatchObject([
      {
        kind: 'request',
        name: 'tools/call',
        session: 'task',
        params: { name: 'demo_task_required', arguments: { x: 1 }, task: { ttl: 60000 } },
        options: { idempotent: false },
      },
    ]);
    expect(outcome).toEqual({
      handle: {
        remoteTaskId: 't1',
        sessionId: 'sess-1',
        protocolVersion: '2025-11-25',
        driverState: { ttl: 60000, pollInterval: 200, pinnedWorkerId: null },
        pinnedWorkerId: null,
      },
      snapshot: { status: TaskStatus.Working, pollAfterMs: 200, inputRequired: null },
    });
  });

  it('over stdio pins the task to this worker', async () => {
    upstream.handler = () => ({ task: task('working') });
    const outcome = await driver.submit(context(TOOLSET, {}, { server: serverConfig('stdio') }));
    expect(outcome.handle?.pinnedWorkerId).toBe('worker-1');
  });

  it('never sends params.task to a tool without task support', async () => {
    const echo = { ...TOOLSET, tool: 'demo_echo' } as ToolsetConfig;
    await expect(driver.submit(context(echo))).rejects.toMatchObject({
      code: TaskErrorCode.SubmitRejected,
      message: 'tool "demo_echo" does not support tasks',
    });
    expect(upstream.calls).toHaveLength(0);
  });

  it('never sends params.task to a server without the tasks capability', async () => {
    upstream.capabilities = {};
    await expect(driver.submit(context(TOOLSET))).rejects.toMatchObject({
      message: 'server does not declare tasks capability',
    });
    expect(upstream.calls).toHaveLength(0);
  });

  it('an over-long taskId is a protocol_error and the task is cancelled', async () => {
    upstream.handler = (method) =>
      method === 'tools/call' ? { task: task('working', { taskId: 'x'.repeat(256) }) } : {};
    await expect(driver.submit(context(TOOLSET))).rejects.toMatchObject({
      code: TaskErrorCode.ProtocolError,
    });
    expect(upstream.calls[1]).toMatchObject({ name: 'tasks/cancel' });
  });

  it('a broken create reply that names a taskId gets that task cancelled', async () => {
    upstream.handler = (method) =>
      method === 'tools/call' ? { task: task('working', { pollInterval: -5 }) } : {};
    await expect(driver.submit(context(TOOLSET))).rejects.toMatchObject({
      code: TaskErrorCode.ProtocolError,
      message: 'tools/call: "task": "pollInterval" must be a finite number > 0',
    });
    expect(upstream.calls[1]).toMatchObject({ name: 'tasks/cancel', params: { taskId: 't1' } });
  });

  const stored = {
    remoteTaskId: 't1',
    remoteSessionId: 'sess-9',
    remoteProtocolVersion: '2025-06-18',
  };

  it('polls tasks/get on the stored HTTP session, without fetching a result while working', async () => {
    upstream.handler = () => task('working', { pollInterval: 700 });
    const snapshot = await driver.poll(context(TOOLSET, stored));
    expect(upstream.resumed).toEqual([{ sessionId: 'sess-9', protocolVersion: '2025-06-18' }]);
    expect(upstream.calls.map((call) => call.name)).toEqual(['tasks/get']);
    expect(upstream.calls[0].session).toBe('resumed:sess-9');
    expect(snapshot.pollAfterMs).toBe(700);
  });

  it('on completed fetches tasks/result, with a timeout, and stores it', async () => {
    upstream.handler = (method) =>
      method === 'tasks/get' ? task('completed') : { content: [{ type: 'text', text: 'ok' }] };
    const snapshot = await driver.poll(context(TOOLSET, stored));
    expect(upstream.calls[1]).toMatchObject({
      name: 'tasks/result',
      params: { taskId: 't1' },
      options: { timeoutMs: 5000 },
    });
    expect(snapshot.result?.value).toEqual({ content: [{ type: 'text', text: 'ok' }] });
  });

  it.each([
    ['-32602 Task not found', notFound],
    [
      'a forgotten session',
      (): never => {
        throw new UpstreamSessionExpiredError('demo');
      },
    ],
  ])('%s is upstream_task_lost', async (_label, fail) => {
    upstream.handler = fail;
    await expect(driver.poll(context(TOOLSET, stored))).rejects.toMatchObject({
      code: TaskErrorCode.UpstreamTaskLost,
    });
  });

  it('a stdio task of another worker is upstream_task_lost without asking', async () => {
    const ctx = context(
      TOOLSET,
      { remoteTaskId: 't1', driverState: { pinnedWorkerId: 'worker-0' } },
      { server: serverConfig('stdio') },
    );
    await expect(driver.poll(ctx)).rejects.toMatchObject({ code: TaskErrorCode.UpstreamTaskLost });
    expect(upstream.calls).toHaveLength(0);
  });

  it('cancel maps the reply of tasks/cancel', async () => {
    upstream.handler = () => task('cancelled');
    expect((await driver.cancel(context(TOOLSET, stored))).status).toBe(TaskStatus.Cancelled);
  });

  it('cancel of a task already terminal (-32602) keeps its real state via tasks/get', async () => {
    upstream.handler = (method) => {
      if (method === 'tasks/cancel') notFound();
      return method === 'tasks/get' ? task('completed') : { content: [] };
    };
    const snapshot = await driver.cancel(context(TOOLSET, stored));
    expect(snapshot.status).toBe(TaskStatus.Completed);
    expect(upstream.calls.map((call) => call.name)).toEqual([
      'tasks/cancel',
      'tasks/get',
      'tasks/result',
    ]);
  });

  it('cancel of a task the upstream does not know is upstream_task_lost', async () => {
    upstream.handler = notFound;
    await expect(driver.cancel(context(TOOLSET, stored))).rejects.toMatchObject({
      code: TaskErrorCode.UpstreamTaskLost,
    });
  });

  it('a cancel that leaves the task working is retried', async () => {
    upstream.handler = () => task('working');
    await expect(driver.cancel(context(TOOLSET, stored))).rejects.toBeInstanceOf(
      TransientTaskError,
    );
  });
});
