// Guards the ordinary contract end to end: every row of contracts.md against the real demo server.
import { TaskErrorCode, TaskStatus, TransientTaskError, type TaskSnapshot } from '@app/common';
import {
  ORDINARY,
  permanent,
  pollUntil,
  registry,
  startPool,
  stdioServer,
  tagStats,
  taskContext,
  useDemoDriver,
} from './driver-harness.helper';

const demo = useDemoDriver(ORDINARY);

async function submitted(args: Record<string, unknown>) {
  const outcome = await demo.driver.submit(taskContext(demo.server, ORDINARY, args));
  const ctx = taskContext(demo.server, ORDINARY, args, outcome.handle);
  return { outcome, ctx };
}

async function runToEnd(args: Record<string, unknown>) {
  const { ctx } = await submitted(args);
  return pollUntil(() => demo.driver.poll(ctx));
}

describe('ordinary: the contract followed', () => {
  it('submit → running → completed with the result', async () => {
    const { outcome } = await submitted({ duration_ms: 10 });
    expect(outcome.snapshot).toEqual({ status: TaskStatus.Working });
    expect(outcome.handle?.remoteTaskId).toMatch(/.+/);
    const { last } = await runToEnd({ duration_ms: 200, result: { answer: 42 } });
    expect(last).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: { answer: 42 }, preview: null, truncated: false },
    });
  });

  it('progress and poll_after_seconds while running', async () => {
    const { ctx } = await submitted({ duration_ms: 5000, progress: true, poll_after_seconds: 2.5 });
    const snapshot = await demo.driver.poll(ctx);
    expect(snapshot.status).toBe(TaskStatus.Working);
    expect(snapshot.pollAfterMs).toBe(2500);
    expect(snapshot.progress).toMatchObject({
      total: 5000,
      message: expect.stringMatching(/done/),
    });
    expect((await demo.driver.cancel(ctx)).status).toBe(TaskStatus.Cancelled);
  });

  it('failed keeps the upstream error as upstream_failed', async () => {
    const { last } = await runToEnd({
      duration_ms: 50,
      outcome: 'fail',
      fail_message: 'disk full',
    });
    expect(last).toMatchObject({
      status: TaskStatus.Failed,
      error: { code: TaskErrorCode.UpstreamFailed, message: 'disk full' },
    });
  });

  it('input_required → working → completed', async () => {
    const { seen, last } = await runToEnd({
      // A 3 s question and 2.9 s of work after it, so polls on a starved machine land in both.
      duration_ms: 6000,
      input_required_after_ms: 100,
      input_required_for_ms: 3000,
    });
    const asking = seen.find((snapshot) => snapshot.status === TaskStatus.InputRequired);
    // Shown in the one shape; this toolset names no inputTool, so it cannot be answered.
    const shown = asking?.inputRequired as {
      requests: Record<string, unknown>;
      answerable: boolean;
    };
    expect(shown.answerable).toBe(false);
    expect(Object.values(shown.requests)).toEqual([
      {
        method: 'elicitation/create',
        params: expect.objectContaining({
          mode: 'form',
          message: expect.stringMatching(/needs input/) as string,
        }) as object,
      },
    ]);
    const after = seen.slice(seen.indexOf(asking!));
    expect(after.some((snapshot) => snapshot.status === TaskStatus.Working)).toBe(true);
    expect(last.status).toBe(TaskStatus.Completed);
  });

  it('result_artifact is stored as the reference', async () => {
    const { last } = await runToEnd({ duration_ms: 50, fault: 'artifact' });
    expect(last.resultArtifact).toEqual({
      uri: expect.stringMatching(/^demo:\/\/artifacts\//),
      mime_type: 'application/json',
    });
  });

  it('a result over MAX_RESULT_BYTES is stored as a preview, never as cut JSON', async () => {
    const { last } = await runToEnd({ duration_ms: 10, result_size: 300_000 });
    expect(last.result).toMatchObject({ value: null, truncated: true });
    expect(last.result?.preview).toHaveLength(2000);
    expect(last.result?.preview?.startsWith('{"echo":')).toBe(true);
  });

  it('cancel while running → cancelled; cancel after completion keeps completed', async () => {
    const running = await submitted({ duration_ms: 60_000 });
    expect((await demo.driver.cancel(running.ctx)).status).toBe(TaskStatus.Cancelled);
    expect((await demo.driver.cancel(running.ctx)).status).toBe(TaskStatus.Cancelled); // idempotent
    const done = await submitted({ duration_ms: 10, result: 'r' });
    await pollUntil(() => demo.driver.poll(done.ctx));
    expect(await demo.driver.cancel(done.ctx)).toMatchObject({
      status: TaskStatus.Completed,
      result: { value: 'r' },
    });
  });
});

describe('ordinary: each way of breaking it', () => {
  it.each([
    [
      'text_only_submit',
      'submit: the result must carry structuredContent {task_id, status: "running"} (text content is never parsed)',
    ],
    ['bad_submit_shape', 'submit: "task_id" must be a non-empty string'],
  ])('%s → protocol_error', async (fault, message) => {
    const error = await permanent(
      demo.driver.submit(taskContext(demo.server, ORDINARY, { fault })),
    );
    expect(error).toMatchObject({ code: TaskErrorCode.ProtocolError, message });
  });

  it('error_submit → submit_rejected with the upstream text', async () => {
    const args = { fault: 'error_submit', fault_detail: 'no capacity' };
    const error = await permanent(demo.driver.submit(taskContext(demo.server, ORDINARY, args)));
    expect(error).toMatchObject({ code: TaskErrorCode.SubmitRejected, message: 'no capacity' });
  });

  it('long_task_id → protocol_error, and the remote task is cancelled', async () => {
    const tag = `long-${Date.now()}`;
    const error = await permanent(
      demo.driver.submit(
        taskContext(demo.server, ORDINARY, { fault: 'long_task_id', tag, duration_ms: 60_000 }),
      ),
    );
    expect(error).toMatchObject({
      code: TaskErrorCode.ProtocolError,
      message: 'submit: "task_id" is 300 chars, over the 255-char bound',
    });
    expect(await tagStats(demo.pool, tag)).toMatchObject({
      submits: 1,
      cancels: 1,
      state: 'cancelled',
    });
  });

  it.each([
    [
      'bad_status_value',
      'status: "status" must be one of running, input_required, completed, failed, cancelled',
    ],
    ['wrong_task_id', 'status: "task_id" must equal the submitted task\'s ID'],
    [
      'missing_input_required',
      'status: "input_required" must be an object when status is "input_required"',
    ],
    ['bad_poll_after', 'status: "poll_after_seconds" must be a finite number > 0'],
    [
      'bad_artifact',
      'status: "result_artifact" must be {uri, mime_type} with both non-empty strings',
    ],
    [
      'huge_artifact',
      /^status: "result_artifact" is \d+ bytes of JSON, over the 65536-byte bound$/,
    ],
    [
      'huge_input_required',
      /^status: "input_required" is \d+ bytes of JSON, over the 65536-byte bound$/,
    ],
  ])('status with %s → protocol_error naming the rule', async (fault, message) => {
    const { ctx } = await submitted({ fault, duration_ms: 60_000 });
    const error = await permanent(demo.driver.poll(ctx));
    expect(error.code).toBe(TaskErrorCode.ProtocolError);
    expect(error.message).toMatch(message);
    await demo.driver.cancel(ctx).catch(() => undefined);
  });

  it('task_not_found → upstream_task_lost', async () => {
    const { ctx } = await submitted({ fault: 'task_not_found' });
    const error = await permanent(demo.driver.poll(ctx));
    expect(error.code).toBe(TaskErrorCode.UpstreamTaskLost);
  });

  it('error_status and error_cancel are transient with the first text block', async () => {
    const status = await submitted({
      fault: 'error_status',
      fault_detail: 'db down',
      duration_ms: 60_000,
    });
    await expect(demo.driver.poll(status.ctx)).rejects.toEqual(new TransientTaskError('db down'));
    const cancel = await submitted({ fault: 'error_cancel', fault_detail: 'x'.repeat(900) });
    const error = await demo.driver.cancel(cancel.ctx).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).toBeInstanceOf(TransientTaskError);
    expect(error?.message).toBe('x'.repeat(500));
  });

  it('hang_submit past the call timeout → outcome_uncertain; with retryOnCrash → transient', async () => {
    const impatient = { ...demo.server, name: 'demo', callTimeoutMs: 300 };
    const shortPool = startPool(impatient);
    const shortDriver = registry(shortPool).forToolset(ORDINARY);
    const error = await permanent(
      shortDriver.submit(taskContext(impatient, ORDINARY, { fault: 'hang_submit' })),
    );
    expect(error.code).toBe(TaskErrorCode.OutcomeUncertain);
    const safe = { ...ORDINARY, retryOnCrash: true };
    await expect(
      shortDriver.submit(taskContext(impatient, safe, { fault: 'hang_submit' })),
    ).rejects.toBeInstanceOf(TransientTaskError);
  });
});

describe('ordinary over stdio', () => {
  it('runs a job, and a crash mid-submit is outcome_uncertain', async () => {
    const stdio = stdioServer([ORDINARY]);
    const stdioPool = startPool(stdio);
    const stdioDriver = registry(stdioPool).forToolset(ORDINARY);
    const outcome = await stdioDriver.submit(taskContext(stdio, ORDINARY, { duration_ms: 50 }));
    const ctx = taskContext(stdio, ORDINARY, {}, outcome.handle);
    const { last } = await pollUntil((): Promise<TaskSnapshot> => stdioDriver.poll(ctx));
    expect(last.status).toBe(TaskStatus.Completed);
    const error = await permanent(
      stdioDriver.submit(taskContext(stdio, ORDINARY, { fault: 'crash_submit' })),
    );
    expect(error.code).toBe(TaskErrorCode.OutcomeUncertain);
  });
});
