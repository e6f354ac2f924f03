// Guards sync-call end to end: a held call with progress, tool errors, and a cancel the server sees.
import { TaskErrorCode, TaskStatus, type TaskProgress } from '@app/common';
import { CallAbortedError } from '@app/drivers';
import { waitUntil } from '../helpers/wait';
import {
  SLOW,
  registry,
  startPool,
  stdioServer,
  tagStats,
  taskContext,
  useDemoDriver,
} from './driver-harness.helper';

const demo = useDemoDriver(SLOW);

describe('sync-call', () => {
  it('completes with the result and reports progress while held', async () => {
    const progress: TaskProgress[] = [];
    // 1.5 s, so a demo server stalled for a second still sends three notifications or more.
    const ctx = taskContext(
      demo.server,
      SLOW,
      { duration_ms: 1500, result: { ok: true } },
      undefined,
      {
        onProgress: (update) => progress.push(update),
      },
    );
    const outcome = await demo.driver.submit(ctx);
    expect(outcome.handle?.remoteTaskId).toBe(`sync:${ctx.task.id}`);
    expect(outcome.snapshot).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { structuredContent: { ok: true } }, truncated: false },
    });
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toMatchObject({
      current: 1500,
      total: 1500,
      message: expect.stringMatching(/ of 1500 ms$/),
    });
  });

  it('isError → failed / upstream_failed with the text', async () => {
    const ctx = taskContext(demo.server, SLOW, {
      duration_ms: 10,
      outcome: 'fail',
      fail_message: 'boom',
    });
    const { snapshot } = await demo.driver.submit(ctx);
    expect(snapshot).toMatchObject({
      status: TaskStatus.Failed,
      error: { code: TaskErrorCode.UpstreamFailed, message: 'boom' },
    });
  });

  it('a result over the bound is stored as a preview', async () => {
    const { snapshot } = await demo.driver.submit(
      taskContext(demo.server, SLOW, { duration_ms: 10, result_size: 300_000 }),
    );
    expect(snapshot?.result).toMatchObject({ value: null, truncated: true });
    expect(snapshot?.result?.preview).toHaveLength(2000);
  });

  it('a cancel aborts the call on the server (demo_stats shows it cancelled)', async () => {
    const tag = `sync-cancel-${Date.now()}`;
    const controller = new AbortController();
    let progressed = false;
    const ctx = taskContext(demo.server, SLOW, { duration_ms: 60_000, tag }, undefined, {
      signal: controller.signal,
      onProgress: () => (progressed = true),
    });
    const held = demo.driver.submit(ctx);
    await waitUntil(() => (progressed ? true : undefined), 'the call to progress');
    controller.abort();
    await expect(held).rejects.toBeInstanceOf(CallAbortedError);
    expect((await demo.driver.cancel(ctx)).status).toBe(TaskStatus.Cancelled);
    await waitUntil(
      async () => ((await tagStats(demo.pool, tag)).cancelled === true ? true : undefined),
      'the upstream job to be cancelled',
    );
    expect(await tagStats(demo.pool, tag)).toMatchObject({
      submits: 1,
      cancels: 1,
      state: 'cancelled',
    });
  });

  it('a worker that lost the held call cannot poll it: outcome_uncertain', async () => {
    await expect(demo.driver.poll(taskContext(demo.server, SLOW, {}))).rejects.toMatchObject({
      code: TaskErrorCode.OutcomeUncertain,
    });
  });

  it('a server crash mid-call is outcome_uncertain, never repeated silently (stdio)', async () => {
    const stdio = stdioServer([SLOW]);
    const stdioDriver = registry(startPool(stdio)).forToolset(SLOW);
    await expect(
      stdioDriver.submit(taskContext(stdio, SLOW, { duration_ms: 400, fault: 'crash_call' })),
    ).rejects.toMatchObject({ code: TaskErrorCode.OutcomeUncertain });
  });
});
