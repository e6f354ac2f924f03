// Guards against keepalive pings racing in-flight requests and against reconnecting servers that merely lack ping.
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { closePools, demoHttp, openPool } from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

describe('keepalive', () => {
  it('pings an idle session but never while a request is in flight', async () => {
    const demo = await startDemoServer();
    const { pool, recorder } = openPool([demoHttp('demo', demo.url, { keepaliveIntervalMs: 40 })]);
    const session = await pool.session('demo');
    const pings = () => recorder.durations.filter((d) => d.operation === 'ping');
    await waitUntil(() => (pings().length >= 2 ? true : undefined), 'idle pings');

    const callStart = Date.now();
    await session.callTool('demo_slow', { duration_ms: 800 }, { idempotent: false });
    const callEnd = Date.now();
    await waitUntil(
      () => (pings().some((p) => p.at > callEnd) ? true : undefined),
      'pings after the call',
    );
    const overlapping = pings().filter((p) => {
      const start = p.at - p.seconds * 1000;
      return start > callStart + 5 && start < callEnd - 5;
    });
    expect(overlapping).toEqual([]);
    expect(recorder.reconnects).toEqual([]);
  });

  it('probes a server without ping with tools/list and does not reconnect it', async () => {
    const demo = await startDemoServer(['--no-ping']);
    const { pool, recorder } = openPool([demoHttp('quiet', demo.url, { keepaliveIntervalMs: 40 })]);
    await pool.session('quiet');
    const probes = () =>
      recorder.durations.filter((d) => d.operation === 'tools/list' && d.server === 'quiet');
    // One tools/list at connect, then the keepalive's probes.
    await waitUntil(() => (probes().length >= 4 ? true : undefined), 'tools/list probes');
    expect(recorder.durations.filter((d) => d.operation === 'ping')).toHaveLength(1);
    expect(recorder.logs.some((line) => line.msg.includes('has no ping'))).toBe(true);
    expect(recorder.reconnects).toEqual([]);
    expect(recorder.transitions('quiet')).toHaveLength(2); // connecting, ready
    expect(pool.status('quiet').state).toBe('ready');
  });
});
