// Guards the `ordinary` contract answers (and its faults) that the gateway's driver relies on.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { waitUntil } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import {
  type Answer,
  call,
  callStructured,
  connectHttp,
  connectStdio,
  firstText,
  useDemoProcesses,
} from './demo-process.helper';

const transports: Array<[string, () => Promise<Client>]> = [
  ['stdio', async () => (await connectStdio()).client],
  ['http', async () => connectHttp((await startDemoServer()).url)],
];

useDemoProcesses();

describe.each(transports)('ordinary contract over %s', (_name, open) => {
  it('runs submit → running → completed with the result, and counts once', async () => {
    const client = await open();
    const submitted = await callStructured(client, 'demo_submit', {
      // 2 s: the status read right after the submit must still find it running on a slow host.
      duration_ms: 2000,
      result: { answer: 42 },
      tag: 'life',
      poll_after_seconds: 0.5,
    });
    expect(submitted).toEqual({ task_id: expect.stringMatching(/^job_/), status: 'running' });
    const running = await callStructured(client, 'demo_status', { task_id: submitted.task_id });
    expect(running).toMatchObject({
      task_id: submitted.task_id,
      status: 'running',
      poll_after_seconds: 0.5,
    });
    const done = await waitUntil(async () => {
      const status = await callStructured(client, 'demo_status', { task_id: submitted.task_id });
      return status.status === 'completed' ? status : undefined;
    }, 'completion');
    expect(done.result).toEqual({ answer: 42 });
    const stats = await callStructured(client, 'demo_stats', { tag: 'life' });
    expect(stats.by_tag.life).toEqual({
      submits: 1,
      cancels: 0,
      cancelled: false,
      state: 'completed',
    });
    expect(stats.ordinary.submits).toBe(1);
    expect(stats.live_jobs).toBe(0);
  });

  it('reports failure, keeps a finished job finished on cancel, and cancels a running one', async () => {
    const client = await open();
    const failing = await callStructured(client, 'demo_submit', {
      duration_ms: 0,
      outcome: 'fail',
      fail_message: 'boom',
    });
    expect(await callStructured(client, 'demo_status', { task_id: failing.task_id })).toMatchObject(
      {
        status: 'failed',
        error: 'boom',
      },
    );
    const finished = await callStructured(client, 'demo_cancel', { task_id: failing.task_id });
    expect(finished).toMatchObject({ task_id: failing.task_id, status: 'failed', error: 'boom' });

    const long = await callStructured(client, 'demo_submit', { duration_ms: 60_000, tag: 'stop' });
    expect(await callStructured(client, 'demo_cancel', { task_id: long.task_id })).toEqual({
      task_id: long.task_id,
      status: 'cancelled',
    });
    // Idempotent: a second cancel reports the same final state.
    expect((await callStructured(client, 'demo_cancel', { task_id: long.task_id })).status).toBe(
      'cancelled',
    );
    expect((await callStructured(client, 'demo_status', { task_id: long.task_id })).status).toBe(
      'cancelled',
    );
    const stats = await callStructured(client, 'demo_stats', { tag: 'stop' });
    expect(stats.by_tag.stop).toMatchObject({
      submits: 1,
      cancels: 2,
      cancelled: true,
      state: 'cancelled',
    });
  });

  it('answers task_not_found for an unknown id', async () => {
    const client = await open();
    expect(await callStructured(client, 'demo_status', { task_id: 'job_nope' })).toMatchObject({
      task_id: 'job_nope',
      status: 'failed',
      error_code: 'task_not_found',
    });
  });

  it('reports an input_required episode with its question', async () => {
    const client = await open();
    const job = await callStructured(client, 'demo_submit', {
      duration_ms: 60_000,
      input_required_after_ms: 0,
      input_required_for_ms: 60_000,
    });
    const status = await callStructured(client, 'demo_status', { task_id: job.task_id });
    expect(status).toMatchObject({
      status: 'input_required',
      input_required: { question: expect.any(String) },
    });
  });

  it('rejects bad arguments with a tool error naming the field', async () => {
    const client = await open();
    const result = await call(client, 'demo_submit', { duration_ms: 'soon' });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain('duration_ms');
  });
});

describe('ordinary faults (stdio)', () => {
  it('breaks the contract on purpose when asked', async () => {
    const { client } = await connectStdio();
    const status = async (fault: string): Promise<Answer> => {
      const job = await callStructured(client, 'demo_submit', { duration_ms: 60_000, fault });
      return callStructured(client, 'demo_status', { task_id: job.task_id });
    };
    expect((await status('bad_status_value')).status).toBe('weird');
    expect((await status('bad_poll_after')).poll_after_seconds).toBe(-1);
    const missing = await status('missing_input_required');
    expect(missing.status).toBe('input_required');
    expect(missing).not.toHaveProperty('input_required');
    expect((await status('task_not_found')).error_code).toBe('task_not_found');
    expect(JSON.stringify((await status('huge_artifact')).result_artifact).length).toBeGreaterThan(
      65_536,
    );

    const rejected = await call(client, 'demo_submit', {
      fault: 'error_submit',
      fault_detail: 'quota',
    });
    expect(rejected).toMatchObject({ isError: true, content: [{ type: 'text', text: 'quota' }] });
    const long = await callStructured(client, 'demo_submit', { fault: 'long_task_id' });
    expect(long.task_id).toHaveLength(300);
    const shape = await callStructured(client, 'demo_submit', { fault: 'bad_submit_shape' });
    expect(shape).not.toHaveProperty('task_id');
    expect(
      (await call(client, 'demo_submit', { fault: 'text_only_submit' })).structuredContent,
    ).toBeUndefined();
  });

  it('hang_submit and hang_status never answer, but the submit is counted', async () => {
    const { client } = await connectStdio();
    const hung = client.callTool(
      { name: 'demo_submit', arguments: { fault: 'hang_submit', tag: 'h' } },
      undefined,
      {
        timeout: 300,
      },
    );
    await expect(hung).rejects.toMatchObject({ code: -32001 }); // the SDK's request timeout
    const job = await callStructured(client, 'demo_submit', { fault: 'hang_status' });
    await expect(
      client.callTool({ name: 'demo_status', arguments: { task_id: job.task_id } }, undefined, {
        timeout: 300,
      }),
    ).rejects.toMatchObject({ code: -32001 });
    expect((await callStructured(client, 'demo_stats', { tag: 'h' })).by_tag.h.submits).toBe(1);
  });

  it('crash_submit counts the submit in the state file, then exits', async () => {
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const stateFile = `${mkdtempSync(`${tmpdir()}/demo-`)}/state.json`;
    const first = await connectStdio(['--state-file', stateFile]);
    await expect(
      call(first.client, 'demo_submit', { fault: 'crash_submit', tag: 'crash' }),
    ).rejects.toThrow();
    const second = await connectStdio(['--state-file', stateFile]);
    const stats = await callStructured(second.client, 'demo_stats', { tag: 'crash' });
    expect(stats.by_tag.crash.submits).toBe(1);
  });
});
