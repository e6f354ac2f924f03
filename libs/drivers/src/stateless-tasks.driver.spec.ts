// Guards against the 2026-07-28 (SEP-2663) path of mcp-tasks dropping a handle, misreading what
// the server decided (resultType), or ending a task dishonestly (-32602, TTL, isError, errors).
import {
  Contract,
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
} from '@app/common';
import type { ToolsetConfig } from '@app/config';
import { UpstreamConnectionError, UpstreamRpcError } from '@app/upstream';
import { McpTasksDriver } from './mcp-tasks.driver';
import { FakeUpstream, context, serverConfig } from './testing/fake-upstream';

const TOOLSET: ToolsetConfig = {
  name: 'modern',
  server: 'demo',
  contract: Contract.McpTasks,
  tool: 'slow_compute',
  retryOnCrash: false,
};
const NOW = new Date().toISOString();
const task = (status: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  resultType: 'complete',
  taskId: 'tk-1',
  status,
  createdAt: NOW,
  lastUpdatedAt: NOW,
  ttlMs: 60000,
  ...extra,
});
const onTask = { remoteTaskId: 'tk-1', remoteProtocolVersion: '2026-07-28' };
/** Pending answers whose beforeSend records the keys marked sent. */
function pending(
  responses: Record<string, unknown>,
  uncertain: string[] = [],
  marked: string[][] = [],
) {
  return {
    responses,
    uncertain,
    beforeSend: (keys: string[]) => {
      marked.push(keys);
      return Promise.resolve();
    },
  };
}

async function failure(work: Promise<unknown>): Promise<PermanentTaskError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PermanentTaskError);
  return error as PermanentTaskError;
}

describe('McpTasksDriver on 2026-07-28', () => {
  let upstream: FakeUpstream;
  let driver: McpTasksDriver;

  beforeEach(() => {
    upstream = new FakeUpstream();
    upstream.protocol = () => '2026-07-28';
    driver = new McpTasksDriver(upstream);
  });

  it('a task: tools/call without params.task, handle with createdAt and ttlMs, hint kept', async () => {
    upstream.handler = () => ({ ...task('working', { pollIntervalMs: 250 }), resultType: 'task' });
    const outcome = await driver.submit(context(TOOLSET, { input: { n: 3 } }));
    expect(upstream.calls).toEqual([
      expect.objectContaining({
        kind: 'stateless',
        name: 'tools/call',
        params: { name: 'slow_compute', arguments: { n: 3 } },
        options: expect.objectContaining({ idempotent: false, name: 'slow_compute' }) as object,
      }),
    ]);
    expect(outcome).toEqual({
      handle: {
        remoteTaskId: 'tk-1',
        protocolVersion: '2026-07-28',
        driverState: { createdAt: Date.parse(NOW), ttlMs: 60000 },
        pinnedWorkerId: null,
      },
      snapshot: {
        status: TaskStatus.Working,
        pollAfterMs: 250,
        backstopAtMs: Date.parse(NOW) + 60000,
      },
    });
  });

  it('over stdio the task stays with this worker, whose child holds it, unless state is shared', async () => {
    upstream.handler = () => ({ ...task('working'), resultType: 'task' });
    const pinnedTo = async (sharedState: boolean) => {
      const server = { ...serverConfig('stdio'), sharedState };
      const outcome = await driver.submit(context(TOOLSET, {}, { server }));
      return outcome.handle?.pinnedWorkerId;
    };
    expect([await pinnedTo(false), await pinnedTo(true)]).toEqual(['worker-1', null]);
  });

  it('a task that ended before its create answer: kept as ended, no outcome asked of it', async () => {
    // A CreateTaskResult never inlines the outcome, whatever its status (a quick task, or a
    // loaded server, ends before the answer is written); the next poll reads it.
    const seen = [];
    for (const status of ['completed', 'failed', 'input_required']) {
      upstream.handler = () => ({ ...task(status), resultType: 'task' });
      const outcome = await driver.submit(context(TOOLSET));
      seen.push([outcome.handle?.remoteTaskId, outcome.snapshot?.status]);
    }
    // Ended: polled at once for the outcome; waiting: its questions come with the next poll.
    expect(seen).toEqual([
      ['tk-1', TaskStatus.Completed],
      ['tk-1', TaskStatus.Failed],
      ['tk-1', TaskStatus.Working],
    ]);
  });

  it('resultType complete: no task upstream, the result is final', async () => {
    upstream.handler = () => ({ resultType: 'complete', content: [{ type: 'text', text: 'hi' }] });
    const outcome = await driver.submit(context(TOOLSET));
    expect(outcome.handle).toBeUndefined();
    expect(outcome.snapshot).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { content: [{ type: 'text', text: 'hi' }] } },
    });
  });

  it('resultType input_required: a round stored on the task, answered by retrying the call', async () => {
    const requests = {
      confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Sure?' } },
    };
    upstream.handler = () => ({
      resultType: 'input_required',
      inputRequests: requests,
      requestState: 'opaque-1',
    });
    const outcome = await driver.submit(context(TOOLSET, { id: 'task_a' }));
    expect(outcome).toEqual({
      handle: {
        remoteTaskId: 'round:task_a',
        protocolVersion: '2026-07-28',
        driverState: { round: { requests, requestState: 'opaque-1' } },
      },
      snapshot: { status: TaskStatus.InputRequired, inputRequired: { requests } },
    });
    const round = {
      id: 'task_a',
      remoteTaskId: outcome.handle?.remoteTaskId ?? null,
      remoteProtocolVersion: '2026-07-28',
      driverState: outcome.handle?.driverState ?? null,
    };
    // Polling a round asks nothing upstream.
    upstream.calls.length = 0;
    await expect(driver.poll(context(TOOLSET, round))).resolves.toMatchObject({
      status: TaskStatus.InputRequired,
    });
    expect(upstream.calls).toEqual([]);
    upstream.handler = () => ({ ...task('working'), resultType: 'task' });
    const answer = { action: 'accept', content: { ok: true } };
    const marked: string[][] = [];
    const answered = await driver.answer(
      context(TOOLSET, { ...round, input: { n: 1 } }),
      pending({ confirm: answer }, [], marked),
    );
    expect(upstream.calls[0].params).toEqual({
      name: 'slow_compute',
      arguments: { n: 1 },
      inputResponses: { confirm: answer },
      requestState: 'opaque-1',
    });
    expect(answered.sent).toEqual(['confirm']);
    expect(marked).toEqual([['confirm']]);
    expect(answered.next?.handle?.remoteTaskId).toBe('tk-1');
  });

  it('a round waits for all its keys, and an uncertain retry is outcome_uncertain', async () => {
    const driverState = {
      round: {
        requests: {
          a: { method: 'elicitation/create', params: {} },
          b: { method: 'elicitation/create', params: {} },
        },
      },
    };
    const ctx = context(TOOLSET, {
      remoteTaskId: 'round:t',
      remoteProtocolVersion: '2026-07-28',
      driverState,
    });
    await expect(driver.answer(ctx, pending({ a: 1 }))).resolves.toEqual({
      sent: [],
    });
    expect(upstream.calls).toEqual([]);
    const error = await failure(driver.answer(ctx, pending({ a: 1, b: 2 }, ['a'])));
    expect(error.code).toBe(TaskErrorCode.OutcomeUncertain);
  });

  it('a task answer goes in tasks/update with Mcp-Name = taskId', async () => {
    upstream.handler = () => ({ resultType: 'complete' });
    const marked: string[][] = [];
    const answered = await driver.answer(
      context(TOOLSET, onTask),
      pending({ name: { action: 'accept', content: { name: 'Ada' } } }, [], marked),
    );
    expect(marked).toEqual([['name']]);
    expect(answered).toEqual({ sent: ['name'] });
    expect(upstream.calls[0]).toMatchObject({
      name: 'tasks/update',
      params: { taskId: 'tk-1', inputResponses: { name: { action: 'accept' } } },
      options: { name: 'tk-1' },
    });
  });

  it('tasks/get inlines the outcome: completed, isError kept as failed, JSON-RPC error failed', async () => {
    const content = [{ type: 'text', text: 'done' }];
    upstream.handler = () => task('completed', { result: { content } });
    await expect(driver.poll(context(TOOLSET, onTask))).resolves.toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { content } },
    });
    upstream.handler = () => task('completed', { result: { content, isError: true } });
    await expect(driver.poll(context(TOOLSET, onTask))).resolves.toMatchObject({
      status: TaskStatus.Failed,
      result: { value: { content, isError: true } },
      error: { code: TaskErrorCode.UpstreamFailed, message: 'done' },
    });
    upstream.handler = () =>
      task('failed', { statusMessage: 'boom', error: { code: -32603, message: 'Internal' } });
    await expect(driver.poll(context(TOOLSET, onTask))).resolves.toEqual({
      status: TaskStatus.Failed,
      inputRequired: null,
      error: {
        code: TaskErrorCode.UpstreamFailed,
        message: 'boom: Internal (JSON-RPC error -32603)',
      },
    });
    expect(upstream.calls.every((call) => call.options.name === 'tk-1')).toBe(true);
  });

  it('input_required shows every outstanding request in the one shape', async () => {
    const inputRequests = {
      q1: { method: 'elicitation/create', params: { message: 'Name?' } },
      q2: { method: 'elicitation/create', params: { message: 'Age?' } },
    };
    upstream.handler = () => task('input_required', { inputRequests, pollIntervalMs: 500 });
    await expect(driver.poll(context(TOOLSET, onTask))).resolves.toEqual({
      status: TaskStatus.InputRequired,
      inputRequired: { requests: inputRequests },
      pollAfterMs: 500,
      // createdAt + ttlMs: a pushed task's safety poll comes no later (docs/connections.md, "Push").
      backstopAtMs: Date.parse(NOW) + 60000,
    });
  });

  it('-32602 on tasks/get is a lost task; past createdAt + ttlMs is lost too', async () => {
    upstream.handler = () => {
      throw new UpstreamRpcError('demo', -32602, 'Task not found');
    };
    expect((await failure(driver.poll(context(TOOLSET, onTask)))).code).toBe(
      TaskErrorCode.UpstreamTaskLost,
    );
    const old = new Date(Date.now() - 10_000).toISOString();
    upstream.handler = () => task('working', { createdAt: old, ttlMs: 5000 });
    const expired = await failure(driver.poll(context(TOOLSET, onTask)));
    expect(expired.code).toBe(TaskErrorCode.UpstreamTaskLost);
    expect(expired.message).toMatch(/ttlMs/);
    // Unreachable after the TTL: no point retrying.
    upstream.handler = () => {
      throw new UpstreamConnectionError('demo', 'refused', false);
    };
    const state = { createdAt: Date.now() - 10_000, ttlMs: 5000 };
    const gone = await failure(driver.poll(context(TOOLSET, { ...onTask, driverState: state })));
    expect(gone.code).toBe(TaskErrorCode.UpstreamTaskLost);
  });

  it('cancel is an ack: the status read after it decides', async () => {
    const answers = [{ resultType: 'complete' }, task('working')];
    upstream.handler = () => answers.shift();
    await expect(driver.cancel(context(TOOLSET, onTask))).rejects.toBeInstanceOf(
      TransientTaskError,
    );
    expect(upstream.calls.map((call) => call.name)).toEqual(['tasks/cancel', 'tasks/get']);
    upstream.handler = (method) =>
      method === 'tasks/cancel' ? { resultType: 'complete' } : task('cancelled');
    await expect(driver.cancel(context(TOOLSET, onTask))).resolves.toMatchObject({
      status: TaskStatus.Cancelled,
    });
  });

  it('a create answer that breaks the contract is cancelled upstream, best effort', async () => {
    upstream.handler = (method) =>
      method === 'tools/call' ? { resultType: 'task', taskId: 'tk-9', status: 'bogus' } : {};
    const error = await failure(driver.submit(context(TOOLSET)));
    expect(error.code).toBe(TaskErrorCode.ProtocolError);
    expect(upstream.calls.map((call) => [call.name, call.params.taskId])).toEqual([
      ['tools/call', undefined],
      ['tasks/cancel', 'tk-9'],
    ]);
  });

  it('a discovery that cannot reach the server is a submit not sent', async () => {
    upstream.protocol = () => {
      throw new UpstreamConnectionError('demo', 'refused', false);
    };
    await expect(driver.submit(context(TOOLSET))).rejects.toBeInstanceOf(TransientTaskError);
    expect(upstream.calls).toEqual([]);
  });
});
