// Guards the held call: bounded progress, isError as upstream_failed, abort as CallAbortedError.
import { Contract, TaskErrorCode, TaskStatus, type TaskProgress } from '@app/common';
import type { ToolsetConfig } from '@app/config';
import { UpstreamConnectionError } from '@app/upstream';
import { CallAbortedError } from './driver.errors';
import { DriverRegistry } from './driver.registry';
import { SyncCallDriver } from './sync-call.driver';
import { FakeUpstream, ORDINARY, context, toolError } from './testing/fake-upstream';

const TOOLSET: ToolsetConfig = {
  name: 'slow',
  server: 'demo',
  contract: Contract.SyncCall,
  tool: 'demo_slow',
  callTimeoutMs: 3_600_000,
  retryOnCrash: false,
};

describe('SyncCallDriver', () => {
  let upstream: FakeUpstream;
  let driver: SyncCallDriver;

  beforeEach(() => {
    upstream = new FakeUpstream();
    driver = new SyncCallDriver(upstream);
  });

  it('holds the call with the toolset timeout and maps progress, bounded', async () => {
    const seen: TaskProgress[] = [];
    upstream.handler = (_name, _args, options) => {
      options.onProgress?.({ progress: 5, total: 10, message: 'm'.repeat(900) });
      return { content: [{ type: 'text', text: 'done' }], _meta: { x: 1 } };
    };
    const outcome = await driver.submit(
      context(TOOLSET, { id: 'task_abc' }, { onProgress: (progress) => seen.push(progress) }),
    );
    expect(upstream.calls[0]).toMatchObject({
      name: 'demo_slow',
      options: { idempotent: false, timeoutMs: 3_600_000 },
    });
    expect(seen).toEqual([{ current: 5, total: 10, message: 'm'.repeat(500) }]);
    expect(outcome).toEqual({
      handle: { remoteTaskId: 'sync:task_abc' },
      snapshot: {
        status: TaskStatus.Completed,
        result: {
          value: { content: [{ type: 'text', text: 'done' }] },
          preview: null,
          truncated: false,
        },
      },
    });
  });

  it('isError ends the task failed / upstream_failed with the text', async () => {
    upstream.handler = () => toolError('out of memory');
    const { snapshot } = await driver.submit(context(TOOLSET));
    expect(snapshot).toMatchObject({
      status: TaskStatus.Failed,
      error: { code: TaskErrorCode.UpstreamFailed, message: 'out of memory' },
    });
  });

  it('an abort through ctx.signal is CallAbortedError', async () => {
    const controller = new AbortController();
    upstream.handler = () => {
      controller.abort();
      throw new UpstreamConnectionError('demo', 'aborted', true);
    };
    await expect(
      driver.submit(context(TOOLSET, {}, { signal: controller.signal })),
    ).rejects.toBeInstanceOf(CallAbortedError);
  });

  it('a lost connection mid-call is outcome_uncertain (never repeated silently)', async () => {
    upstream.handler = () => {
      throw new UpstreamConnectionError('demo', 'child exited', true);
    };
    await expect(driver.submit(context(TOOLSET))).rejects.toMatchObject({
      code: TaskErrorCode.OutcomeUncertain,
    });
  });

  it('poll is outcome_uncertain: a call no longer held cannot be asked about', async () => {
    await expect(driver.poll(context(TOOLSET))).rejects.toMatchObject({
      code: TaskErrorCode.OutcomeUncertain,
    });
  });

  it('cancel is a cancelled snapshot (the poller aborts the held call)', async () => {
    expect(await driver.cancel(context(TOOLSET))).toEqual({ status: TaskStatus.Cancelled });
  });
});

describe('DriverRegistry', () => {
  it('maps each contract to its driver', () => {
    const registry = DriverRegistry.forPort(new FakeUpstream());
    expect(registry.get(Contract.SyncCall)).toBeInstanceOf(SyncCallDriver);
    expect(registry.forToolset(ORDINARY).constructor.name).toBe('OrdinaryDriver');
    expect(registry.get(Contract.McpTasks).constructor.name).toBe('McpTasksDriver');
  });
});
