// Guards the sync-call tool: progress while it runs, cancellation that really stops and is counted.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { waitUntil } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import {
  call,
  callStructured,
  connectHttp,
  connectStdio,
  useDemoProcesses,
} from './demo-process.helper';

const transports: Array<[string, () => Promise<Client>]> = [
  ['stdio', async () => (await connectStdio()).client],
  ['http', async () => connectHttp((await startDemoServer()).url)],
];

useDemoProcesses();

describe.each(transports)('demo_slow over %s', (_name, open) => {
  it('sends progress at least every 200 ms and returns the result', async () => {
    const client = await open();
    const seen: Array<{ at: number; progress: Progress }> = [];
    // A 1.5 s call, a notification every 100 ms: a demo server stalled for a second still
    // sends at least three (a timer that fell behind fires once, not once per missed tick).
    const result = await client.callTool(
      { name: 'demo_slow', arguments: { duration_ms: 1500, result: { slow: true } } },
      CallToolResultSchema,
      { onprogress: (progress) => seen.push({ at: Date.now(), progress }) },
    );
    expect(result.structuredContent).toEqual({ slow: true });
    expect(seen.length).toBeGreaterThanOrEqual(3);
    // Not asserting the final 1500: the SDK client handles notifications a tick after responses,
    // so the last progress can lose the race with the result it precedes.
    expect(seen.every(({ progress }) => progress.total === 1500)).toBe(true);
    const values = seen.map(({ progress }) => progress.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    const gaps = seen.slice(1).map((entry, i) => entry.at - seen[i].at);
    // 200 ms promised: the median gap, which one stall of a loaded host does not decide.
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
    expect(median).toBeLessThanOrEqual(200);
    // And no gap near the call's length: a stall shows here, a missing cadence above.
    expect(Math.max(...gaps)).toBeLessThan(2000);
  });

  it('stops on cancellation and counts it', async () => {
    const client = await open();
    const abort = new AbortController();
    let progressed = 0;
    const pending = client.callTool(
      { name: 'demo_slow', arguments: { duration_ms: 60_000, tag: 'abort' } },
      CallToolResultSchema,
      { signal: abort.signal, onprogress: () => (progressed += 1) },
    );
    await waitUntil(async () => (progressed > 0 ? true : undefined), 'first progress');
    abort.abort();
    await expect(pending).rejects.toThrow();
    const stats = await waitUntil(async () => {
      const answer = await callStructured(client, 'demo_stats', { tag: 'abort' });
      return answer.sync.cancelled === 1 ? answer : undefined;
    }, 'the cancel to be counted');
    expect(stats.by_tag.abort).toMatchObject({
      submits: 1,
      cancels: 1,
      cancelled: true,
      state: 'cancelled',
    });
    expect(stats.live_jobs).toBe(0);
  });

  it('returns isError with fail_message when outcome is fail', async () => {
    const client = await open();
    const result = await call(client, 'demo_slow', {
      duration_ms: 50,
      outcome: 'fail',
      fail_message: 'nope',
    });
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    expect((await callStructured(client, 'demo_stats')).sync).toEqual({
      calls: 1,
      completed: 0,
      cancelled: 0,
      failed: 1,
    });
  });
});

describe('demo_slow faults (stdio)', () => {
  it('crash_call ends the process mid-call', async () => {
    const { client } = await connectStdio();
    const closed = new Promise<void>((resolve) => (client.onclose = resolve));
    await expect(
      call(client, 'demo_slow', { duration_ms: 200, fault: 'crash_call' }),
    ).rejects.toThrow();
    await closed;
  });
});
