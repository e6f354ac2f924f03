// Guards against restart storms on flapping servers, backoff loops on permanent errors, and servers dead until restart.
import { freePort } from '@app/dev-db';
import { UpstreamUnavailableError } from '@app/upstream';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import {
  closePools,
  demoHttp,
  fakeMcpEndpoint,
  demoStdio,
  openPool,
  waitForState,
} from './mcp-test.helper';
import { serverConfig } from '../helpers/server-config';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

describe('parking', () => {
  it('parks a 403 and a server of an unsupported protocol version at the first connect', async () => {
    const forbidden = await fakeMcpEndpoint(({ id }) => ({
      status: 403,
      body: { jsonrpc: '2.0', id, error: { code: -32001, message: 'forbidden' } },
    }));
    const ancient = await fakeMcpEndpoint(({ id }) => ({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: '1999-01-01',
          capabilities: { tools: {} },
          serverInfo: { name: 'ancient', version: '1.0.0' },
        },
      },
    }));
    const { pool, recorder } = openPool([
      demoHttp('forbidden', forbidden.url, { connectAttempts: 5 }),
      demoHttp('ancient', ancient.url, { connectAttempts: 5 }),
    ]);
    // The catalog publisher learns of a park through the pool's state listeners; one that
    // throws is logged and stops neither the others nor the supervisor.
    const seen: string[] = [];
    pool.onStateChange(() => {
      throw new Error('listener bug');
    });
    pool.onStateChange((server, state) => seen.push(`${server} ${state}`));
    expect((await waitForState(pool, 'forbidden', 'parked')).reason).toMatch(/not authorized.*403/);
    expect((await waitForState(pool, 'ancient', 'parked')).reason).toMatch(
      /protocol version is not supported/i,
    );
    expect(seen).toEqual(expect.arrayContaining(['forbidden parked', 'ancient parked']));
    expect(recorder.logs.filter((l) => l.msg === 'state listener failed').length).toBe(seen.length);
    // Permanent answers: no retry within the connect budget of five.
    expect(forbidden.initializes()).toBe(1);
    expect(ancient.initializes()).toBe(1);
    expect(recorder.reconnects.filter((r) => r.reason === 'connect_failed')).toEqual([]);
  });

  it('parks a flapping server after its connect budget, not before', async () => {
    const { pool, recorder } = openPool([
      demoStdio('flappy', ['--drop-after-initialize'], { connectAttempts: 3 }),
    ]);
    const status = await waitForState(pool, 'flappy', 'parked');
    // Three handshakes succeeded, but no request did: the budget was never reset.
    expect(recorder.reconnects.filter((r) => r.reason === 'connect_failed')).toHaveLength(2);
    expect(recorder.transitions('flappy', 'ready')).toHaveLength(0);
    expect(status.reason).toBeDefined();
    await expect(pool.session('flappy')).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });

  it('parks a missing command at once and logs repeated probe failures once', async () => {
    const { pool, recorder } = openPool([
      serverConfig({ name: 'missing', command: '/nonexistent/mcp-server', parkedProbeMs: 30 }),
    ]);
    const status = await waitForState(pool, 'missing', 'parked');
    expect(status.reason).toMatch(/command not found/);
    await waitUntil(
      () =>
        recorder.reconnects.filter((r) => r.reason === 'probe').length >= 4 ? true : undefined,
      'several probes',
    );
    expect(recorder.reconnects.some((r) => r.reason === 'connect_failed')).toBe(false);
    expect(
      recorder.logs.filter((line) => line.obj.server === 'missing' && 'to' in line.obj),
    ).toHaveLength(2);
  });

  it('parks an HTML endpoint, a bad URL and a 401 at once with a clear reason', async () => {
    const html = await startDemoServer(['--html']);
    const auth = await startDemoServer(['--require-auth', 'sesame']);
    const { pool } = openPool([
      demoHttp('html', html.url, { connectAttempts: 5 }),
      serverConfig({ name: 'bad-url', transport: 'http', url: 'ftp://example.com/mcp' }),
      demoHttp('no-token', auth.url, { connectAttempts: 5 }),
      demoHttp('token', auth.url, { headers: { Authorization: 'Bearer sesame' } }),
    ]);
    expect((await waitForState(pool, 'html', 'parked')).reason).toMatch(/HTML/);
    expect((await waitForState(pool, 'bad-url', 'parked')).reason).toMatch(/URL/);
    expect((await waitForState(pool, 'no-token', 'parked')).reason).toMatch(/not authorized.*401/);
    await waitForState(pool, 'token', 'ready');
  });

  it('revives a parked server on its probe timer, and degrades again when it goes away', async () => {
    const port = await freePort();
    const { pool, recorder } = openPool([
      serverConfig({
        name: 'late',
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        connectAttempts: 2,
        parkedProbeMs: 300,
      }),
    ]);
    expect((await waitForState(pool, 'late', 'parked')).reason).toMatch(
      /fetch failed|ECONNREFUSED/,
    );
    const demo = await startDemoServer([], { port });
    await waitForState(pool, 'late', 'ready');
    expect(recorder.reconnects.some((r) => r.reason === 'probe')).toBe(true);
    expect(pool.status('late').tools?.map((tool) => tool.name)).toContain('demo_echo');

    // Down again: keepalive is off, so the next request finds out and the server degrades.
    await demo.kill();
    const session = await pool.session('late');
    await expect(
      session.callTool('demo_echo', { text: 'x' }, { idempotent: true }),
    ).rejects.toThrow();
    await waitForState(pool, 'late', 'parked');
  });

  it('revives a parked server on new work without waiting for the probe timer', async () => {
    const port = await freePort();
    const { pool, recorder } = openPool([
      serverConfig({
        name: 'late',
        transport: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        connectAttempts: 1,
        parkedProbeMs: 600_000,
      }),
    ]);
    await waitForState(pool, 'late', 'parked');
    await startDemoServer([], { port });
    const session = await pool.session('late');
    await session.callTool('demo_echo', { text: 'x' }, { idempotent: true });
    expect(recorder.reconnects).toEqual([{ server: 'late', reason: 'work' }]);
  });
});
