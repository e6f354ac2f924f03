// Guards the ordinary driver's calls: arguments unchanged, idempotency flags, the 255-char ID rule.
import {
  Contract,
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
} from '@app/common';
import { UpstreamTimeoutError } from '@app/upstream';
import { OrdinaryDriver } from './ordinary.driver';
import {
  FakeUpstream,
  ORDINARY,
  context,
  serverConfig,
  structured,
  toolError,
} from './testing/fake-upstream';

describe('OrdinaryDriver', () => {
  let upstream: FakeUpstream;
  let driver: OrdinaryDriver;

  beforeEach(() => {
    upstream = new FakeUpstream();
    driver = new OrdinaryDriver(upstream);
  });

  it('submits the consumer arguments unchanged, not idempotent, and stores the task_id', async () => {
    upstream.handler = () => structured({ task_id: 'job_1', status: 'running' });
    const outcome = await driver.submit(context(ORDINARY, { input: { a: 1, nested: [true] } }));
    expect(outcome).toEqual({
      handle: { remoteTaskId: 'job_1', pinnedWorkerId: null },
      snapshot: { status: TaskStatus.Working },
    });
    expect(upstream.calls).toMatchObject([
      { name: 'demo_submit', params: { a: 1, nested: [true] }, options: { idempotent: false } },
    ]);
  });

  it('over stdio the handle is pinned to this worker, unless the server declares sharedState', async () => {
    upstream.handler = () => structured({ task_id: 'job_1', status: 'running' });
    const stdio = serverConfig('stdio');
    const pinned = await driver.submit(context(ORDINARY, {}, { server: stdio }));
    expect(pinned.handle).toEqual({ remoteTaskId: 'job_1', pinnedWorkerId: 'worker-1' });
    const shared = await driver.submit(
      context(ORDINARY, {}, { server: { ...stdio, sharedState: true } }),
    );
    expect(shared.handle).toEqual({ remoteTaskId: 'job_1', pinnedWorkerId: null });
  });

  it('an over-long task_id is a protocol_error and the remote task is cancelled', async () => {
    const long = 'j'.repeat(300);
    upstream.handler = (name) =>
      name === 'demo_submit'
        ? structured({ task_id: long, status: 'running' })
        : structured({ task_id: long, status: 'cancelled' });
    await expect(driver.submit(context(ORDINARY))).rejects.toMatchObject({
      code: TaskErrorCode.ProtocolError,
      message: 'submit: "task_id" is 300 chars, over the 255-char bound',
    });
    expect(upstream.calls[1]).toMatchObject({ name: 'demo_cancel', params: { task_id: long } });
  });

  it('still fails with protocol_error when that best-effort cancel fails', async () => {
    upstream.handler = (name) => {
      if (name === 'demo_cancel') throw new UpstreamTimeoutError('demo', 10);
      return structured({ task_id: 'j'.repeat(256), status: 'running' });
    };
    await expect(driver.submit(context(ORDINARY))).rejects.toMatchObject({
      code: TaskErrorCode.ProtocolError,
    });
  });

  it('a broken submit answer that names a task_id gets that task cancelled', async () => {
    upstream.handler = (name) =>
      name === 'demo_submit'
        ? structured({ task_id: 'job_9', status: 'queued' })
        : structured({ task_id: 'job_9', status: 'cancelled' });
    await expect(driver.submit(context(ORDINARY))).rejects.toMatchObject({
      code: TaskErrorCode.ProtocolError,
      message: 'submit: "status" must be "running"',
    });
    expect(upstream.calls.map((call) => call.name)).toEqual(['demo_submit', 'demo_cancel']);
  });

  it('a rejected submit (isError) cancels nothing', async () => {
    upstream.handler = () => toolError('no');
    await expect(driver.submit(context(ORDINARY))).rejects.toMatchObject({
      code: TaskErrorCode.SubmitRejected,
    });
    expect(upstream.calls).toHaveLength(1);
  });

  it('a submit timeout is outcome_uncertain unless retryOnCrash', async () => {
    upstream.handler = () => {
      throw new UpstreamTimeoutError('demo', 10);
    };
    await expect(driver.submit(context(ORDINARY))).rejects.toMatchObject({
      code: TaskErrorCode.OutcomeUncertain,
    });
    const safe = { ...ORDINARY, retryOnCrash: true };
    await expect(driver.submit(context(safe))).rejects.toBeInstanceOf(TransientTaskError);
  });

  it('polls the status tool with {task_id}, idempotent', async () => {
    upstream.handler = () => structured({ task_id: 'job_1', status: 'completed', result: 3 });
    const snapshot = await driver.poll(context(ORDINARY, { remoteTaskId: 'job_1' }));
    expect(snapshot.status).toBe(TaskStatus.Completed);
    expect(upstream.calls).toMatchObject([
      { name: 'demo_status', params: { task_id: 'job_1' }, options: { idempotent: true } },
    ]);
  });

  it('a status isError is transient; a cancel returns the real final state', async () => {
    upstream.handler = () => toolError('db down');
    await expect(driver.poll(context(ORDINARY, { remoteTaskId: 'job_1' }))).rejects.toThrow(
      new TransientTaskError('db down'),
    );
    upstream.handler = () => structured({ task_id: 'job_1', status: 'completed' });
    const snapshot = await driver.cancel(context(ORDINARY, { remoteTaskId: 'job_1' }));
    expect(snapshot.status).toBe(TaskStatus.Completed);
    expect(upstream.calls[1].name).toBe('demo_cancel');
  });

  it('a poll without a stored remote ID is upstream_task_lost', async () => {
    await expect(driver.poll(context(ORDINARY))).rejects.toBeInstanceOf(PermanentTaskError);
    expect(upstream.calls).toHaveLength(0);
  });

  it('refuses a toolset of another contract', async () => {
    const other = { ...ORDINARY, contract: Contract.SyncCall, tool: 'x', callTimeoutMs: 1 };
    await expect(driver.submit(context(other as never))).rejects.toThrow(/not ordinary/);
  });

  describe('questions and answers', () => {
    const asking = structured({
      task_id: 'job_1',
      status: 'input_required',
      input_required: { question: 'Which region?' },
    });

    it('without an inputTool the question is shown but marked not answerable', async () => {
      upstream.handler = () => asking;
      const snapshot = await driver.poll(context(ORDINARY, { remoteTaskId: 'job_1' }));
      expect(snapshot.inputRequired).toMatchObject({ answerable: false });
      const sent = await driver.answer(context(ORDINARY, { remoteTaskId: 'job_1' }), {
        responses: { k: {} },
        uncertain: [],
        beforeSend: () => Promise.reject(new Error('nothing may be sent')),
      });
      expect(sent).toEqual({ sent: [] });
      expect(upstream.calls).toHaveLength(1);
    });

    it('an inputTool gets {task_id, responses}, marked sent first; isError is retried', async () => {
      const toolset = { ...ORDINARY, inputTool: 'demo_input' };
      upstream.handler = () => asking;
      const snapshot = await driver.poll(context(toolset, { remoteTaskId: 'job_1' }));
      expect(snapshot.inputRequired).not.toHaveProperty('answerable');
      const order: string[] = [];
      upstream.handler = (name) => {
        order.push(name);
        return structured({ ok: true });
      };
      const answers = {
        responses: { q: { action: 'accept', content: { region: 'eu' } } },
        uncertain: [],
        beforeSend: (keys: string[]) => {
          order.push(`mark ${keys.join(',')}`);
          return Promise.resolve();
        },
      };
      const ctx = context(toolset, { remoteTaskId: 'job_1' });
      await expect(driver.answer(ctx, answers)).resolves.toEqual({ sent: ['q'] });
      expect(order).toEqual(['mark q', 'demo_input']);
      expect(upstream.calls.at(-1)).toMatchObject({
        name: 'demo_input',
        params: { task_id: 'job_1', responses: answers.responses },
        options: { idempotent: false },
      });
      upstream.handler = () => toolError('not now');
      await expect(driver.answer(ctx, answers)).rejects.toBeInstanceOf(TransientTaskError);
    });
  });
});
