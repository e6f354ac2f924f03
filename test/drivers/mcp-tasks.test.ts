// Guards native MCP Tasks end to end: session binding over HTTP, pinning over stdio, lost tasks.
import { TaskErrorCode, TaskStatus } from '@app/common';
import type { ToolsetConfig } from '@app/config';
import {
  NATIVE,
  permanent,
  pollUntil,
  registry,
  startPool,
  stdioServer,
  tagStats,
  taskContext,
  useDemoDriver,
} from './driver-harness.helper';

// The 2025-11-25 design (SEP-1686), whatever else the demo server speaks.
const demo = useDemoDriver(NATIVE, (server) => ({ ...server, protocolVersion: '2025-11-25' }));

async function submitted(args: Record<string, unknown>, toolset: ToolsetConfig = NATIVE) {
  const outcome = await demo.driver.submit(taskContext(demo.server, toolset, args));
  return { outcome, ctx: taskContext(demo.server, toolset, args, outcome.handle) };
}

describe('mcp-tasks over Streamable HTTP', () => {
  it('create → working → input_required → completed with the result', async () => {
    const { outcome, ctx } = await submitted({
      // A 2 s question, so a poll on a loaded machine still lands inside it.
      duration_ms: 3000,
      input_required_after_ms: 200,
      input_required_for_ms: 2000,
      poll_interval_ms: 150,
      result: { answer: 42 },
    });
    expect(outcome.handle).toMatchObject({
      remoteTaskId: expect.stringMatching(/^task_/),
      sessionId: expect.any(String),
      protocolVersion: expect.any(String),
      driverState: { ttl: 600_000, pollInterval: 150 },
      pinnedWorkerId: null,
    });
    expect(outcome.snapshot).toMatchObject({ status: TaskStatus.Working, pollAfterMs: 150 });
    const { seen, last } = await pollUntil(() => demo.driver.poll(ctx));
    const asking = seen.find((snapshot) => snapshot.status === TaskStatus.InputRequired);
    expect(asking?.inputRequired).toEqual({
      requests: {
        [Object.keys((asking?.inputRequired as { requests: object }).requests)[0]]: {
          method: 'elicitation/create',
          params: { mode: 'form', message: expect.stringMatching(/needs input/) as string },
        },
      },
      answerable: false,
    });
    expect(last).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { structuredContent: { answer: 42 } }, truncated: false },
    });
  });

  it('failed keeps the statusMessage and the isError text as upstream_failed', async () => {
    const { ctx } = await submitted({
      duration_ms: 50,
      outcome: 'fail',
      fail_message: 'disk full',
    });
    const { last } = await pollUntil(() => demo.driver.poll(ctx));
    expect(last.status).toBe(TaskStatus.Failed);
    expect(last.error?.code).toBe(TaskErrorCode.UpstreamFailed);
    expect(last.error?.message).toMatch(/disk full/);
  });

  it('a result over the bound is stored as a preview', async () => {
    const { ctx } = await submitted({ duration_ms: 10, result_size: 300_000 });
    const { last } = await pollUntil(() => demo.driver.poll(ctx));
    expect(last.result).toMatchObject({ value: null, truncated: true });
    expect(last.result?.preview).toHaveLength(2000);
  });

  it('cancel while working → cancelled (the server saw it)', async () => {
    const tag = `native-cancel-${Date.now()}`;
    const { ctx } = await submitted({ duration_ms: 60_000, tag });
    expect((await demo.driver.cancel(ctx)).status).toBe(TaskStatus.Cancelled);
    expect(await tagStats(demo.pool, tag)).toMatchObject({ state: 'cancelled' });
  });

  it('cancel after completion keeps completed, with the result', async () => {
    const { ctx } = await submitted({ duration_ms: 10, result: 'done' });
    await pollUntil(() => demo.driver.poll(ctx));
    expect(await demo.driver.cancel(ctx)).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { content: [{ type: 'text', text: '"done"' }] } },
    });
  });

  it("a poll on another worker's pool reattaches to the stored session", async () => {
    const { ctx } = await submitted({ duration_ms: 100 });
    const other = registry(startPool(demo.server)).forToolset(NATIVE);
    const { last } = await pollUntil(() => other.poll({ ...ctx, workerId: 'other-worker' }));
    expect(last.status).toBe(TaskStatus.Completed);
  });

  it('session forgotten by the server → upstream_task_lost', async () => {
    const { ctx } = await submitted({ duration_ms: 60_000 });
    const response = await fetch(`${demo.url}/admin/forget-sessions`, { method: 'POST' });
    expect(response.ok).toBe(true);
    const error = await permanent(demo.driver.poll(ctx));
    expect(error.code).toBe(TaskErrorCode.UpstreamTaskLost);
  });

  it('a tool without task support is never called with params.task', async () => {
    // demo_slow has no task support and counts its calls per tag, so the server proves absence.
    const tag = `no-task-${Date.now()}`;
    const slow = { ...NATIVE, tool: 'demo_slow' } as ToolsetConfig;
    const error = await permanent(
      demo.driver.submit(taskContext(demo.server, slow, { tag, duration_ms: 10 })),
    );
    expect(error).toMatchObject({
      code: TaskErrorCode.SubmitRejected,
      message: 'tool "demo_slow" does not support tasks',
    });
    expect(await tagStats(demo.pool, tag)).toEqual({});
    const session = await demo.pool.session('demo');
    await session.callTool('demo_slow', { tag, duration_ms: 10 }, { idempotent: false });
    expect(await tagStats(demo.pool, tag)).toMatchObject({ submits: 1 }); // the counter does count
  });
});

describe('mcp-tasks over stdio', () => {
  it('pins the task to this worker and runs it to completion; another worker loses it', async () => {
    const stdio = stdioServer([NATIVE]);
    const stdioDriver = registry(startPool(stdio)).forToolset(NATIVE);
    const outcome = await stdioDriver.submit(taskContext(stdio, NATIVE, { duration_ms: 100 }));
    expect(outcome.handle?.pinnedWorkerId).toBe('worker-test');
    const ctx = taskContext(stdio, NATIVE, {}, outcome.handle);
    const { last } = await pollUntil(() => stdioDriver.poll(ctx));
    expect(last.status).toBe(TaskStatus.Completed);
    const error = await permanent(stdioDriver.poll({ ...ctx, workerId: 'someone-else' }));
    expect(error.code).toBe(TaskErrorCode.UpstreamTaskLost);
  });
});
