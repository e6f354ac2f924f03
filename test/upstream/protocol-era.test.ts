// Guards against a 2026-07-28-only upstream being run through a 2025-11-25 session (initialize
// refused with -32020, the server parked), a 2025-11-25-only upstream losing its session side,
// and a server redeployed to the other era going unnoticed (docs/connections.md, "Which side
// serves").
import type { ServerConfig, ToolsetConfig } from '@app/config';
import type { UpstreamPool } from '@app/upstream';
import { freePort } from '@app/dev-db';
import { CatalogBuilder } from '@app/drivers';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { closePools, demoHttp, nativeToolset, openPool, ordinaryToolset } from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

function server(name: string, url: string, extra: Partial<ServerConfig> = {}): ServerConfig {
  return demoHttp(name, url, { toolsets: [nativeToolset(name)], ...extra });
}

describe('which side serves a server', () => {
  it('a strict 2026-07-28 server is ready from server/discover and tools/list, pinned or not', async () => {
    const strict = await startDemoServer(['--strict-2026']);
    const { pool, recorder } = openPool([
      server('found', strict.url),
      server('pinned', strict.url, { protocolVersion: '2026-07-28' }),
      server('mixed', strict.url, {
        toolsets: [nativeToolset('mixed'), ordinaryToolset('mixed')],
        connectAttempts: 1,
      }),
    ]);
    const started = Date.now();
    for (const name of ['found', 'pinned', 'mixed']) {
      const status = await waitUntil(
        () => (pool.status(name).state === 'ready' ? pool.status(name) : undefined),
        `${name} to be ready`,
        10_000,
      );
      expect(status.taskProtocol).toBe('2026-07-28');
      expect(status.tools?.map((tool) => tool.name)).toContain('demo_task');
      await expect(pool.taskProtocol(name)).resolves.toBe('2026-07-28');
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    // No session was opened where no toolset needs one.
    expect(pool.status('found').sessionSide).toBeUndefined();
    expect(pool.status('pinned').sessionSide).toBeUndefined();
    expect(recorder.reconnects.filter((r) => r.server !== 'mixed')).toEqual([]);
    expect(
      recorder.logs.filter((l) => l.obj.side === 'session' && l.obj.server !== 'mixed'),
    ).toEqual([]);
    // An ordinary toolset beside it needs a session: refused, and no session version listed, the
    // server is served without one, and the toolset by stateless calls.
    await waitUntil(
      () => (pool.status('mixed').sessionSide === undefined ? true : undefined),
      'the mixed server to be served without a session',
    );
    const rows = new CatalogBuilder().build(
      [nativeToolset('mixed'), ordinaryToolset('mixed')],
      pool.status('mixed'),
    );
    expect(rows.map((row) => [row.name, row.available, row.unavailableReason])).toEqual([
      ['mixed-native', true, null],
      ['mixed-ordinary', true, null],
    ]);
    await expectStatelessSubmit(pool, 'mixed');
  });

  it('an unpinned strict 2026-07-28 server without mcp-tasks toolsets serves after one refusal', async () => {
    const strict = await startDemoServer(['--strict-2026']);
    const { pool, recorder } = openPool([
      server('plain', strict.url, { toolsets: [ordinaryToolset('plain')] }),
    ]);
    // The session is refused (-32020); the server/discover asked then finds 2026-07-28 and no
    // session version: the 2026-07-28 side wakes and serves, and no session is tried again.
    const status = await waitUntil(
      () => (pool.status('plain').state === 'ready' ? pool.status('plain') : undefined),
      'the plain server to be ready',
      10_000,
    );
    expect(status.taskProtocol).toBe('2026-07-28');
    expect(status.sessionSide).toBeUndefined();
    const [row] = new CatalogBuilder().build([ordinaryToolset('plain')], status);
    expect([row.available, row.unavailableReason]).toEqual([true, null]);
    await expectStatelessSubmit(pool, 'plain');
    // A held call (demo_slow) without a session: its progress comes on the answer's SSE stream.
    const progress: number[] = [];
    const held = await (
      await pool.session('plain')
    ).callTool(
      'demo_slow',
      { duration_ms: 250 },
      { idempotent: false, onProgress: (p) => progress.push(p.progress) },
    );
    expect(held.isError).toBeFalsy();
    expect(held.structuredContent).toMatchObject({ echo: { duration_ms: 250 } });
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toBe(250);
    // The session side was put to rest, not left retrying beside it.
    const sessionSide = recorder.logs.filter((l) => l.obj.side === 'session');
    expect(sessionSide.at(-1)?.obj.reason).toBe('the server speaks 2026-07-28 without a session');
  });

  it('a server listing 2026-07-28 alone that opens sessions keeps them: versions alone decide nothing', async () => {
    // The demo server on its defaults lists 2026-07-28 alone yet opens sessions: its session
    // works, so no discover is asked for a server without mcp-tasks toolsets.
    const both = await startDemoServer([]);
    const { pool, recorder } = openPool([
      server('both', both.url, { toolsets: [ordinaryToolset('both')] }),
    ]);
    const status = await waitUntil(
      () => (pool.status('both').state === 'ready' ? pool.status('both') : undefined),
      'the both-eras server session to be ready',
    );
    expect(status.taskProtocol).toBe('2025-11-25');
    expect(status.capabilities).toBeDefined();
    const session = await pool.session('both');
    expect(session.constructor.name).toBe('PooledSessionAdapter');
    expect(recorder.logs.map((l) => l.msg)).not.toContain('upstream protocol asked again');
  });

  it('a session that times out is no refusal: a server that lists 2026-07-28 alone keeps it', async () => {
    // Found in CI: under load the demo server's initialize missed the connect deadline, and the
    // server (which lists 2026-07-28 alone yet opens sessions) was served without one, losing
    // the sync-call tool that exists on its session only.
    const slow = await startDemoServer(['--slow-initialize-ms', '1500']);
    const { pool, recorder } = openPool([
      server('slow', slow.url, {
        toolsets: [nativeToolset('slow'), ordinaryToolset('slow')],
        connectTimeoutMs: 500,
      }),
      // Without mcp-tasks toolsets, a timeout does not even wake the latent side.
      server('plain', slow.url, { toolsets: [ordinaryToolset('plain')], connectTimeoutMs: 500 }),
    ]);
    const timeouts = (name: string) =>
      recorder.logs.filter(
        (l) =>
          l.obj.server === name &&
          l.obj.side === 'session' &&
          /did not finish/.test(String(l.obj.reason)),
      ).length;
    await waitUntil(
      () =>
        pool.status('slow').state === 'ready' && timeouts('slow') >= 2 && timeouts('plain') >= 2
          ? true
          : undefined,
      'the 2026-07-28 side ready and two session connects of each server timed out',
      15_000,
    );
    expect(pool.status('slow').sessionSide).toBeDefined();
    expect(pool.status('plain').taskProtocol).toBe('2025-11-25');
    expect(recorder.logs.map((l) => l.obj.reason)).not.toContain(
      'the server speaks 2026-07-28 without a session',
    );
    expect(recorder.logs.filter((l) => l.obj.server === 'plain').map((l) => l.msg)).not.toContain(
      'upstream protocol asked again',
    );
  });

  it('a 2025-11-25-only server (server/discover refused) is served by its session', async () => {
    const legacy = await startDemoServer(['--only-2025']);
    const { pool } = openPool([
      server('legacy', legacy.url, {
        toolsets: [{ ...nativeToolset('legacy'), tool: 'demo_task_required' } as ToolsetConfig],
      }),
    ]);
    await expect(pool.taskProtocol('legacy')).resolves.toBe('2025-11-25');
    const status = await waitUntil(
      () => (pool.status('legacy').state === 'ready' ? pool.status('legacy') : undefined),
      'the session side to be ready',
    );
    expect(status.taskProtocol).toBe('2025-11-25');
    expect(status.capabilities?.tasks?.requests?.tools?.call).toBeDefined();
    const session = await pool.taskSession('legacy');
    expect(session.sessionId).toBeDefined();
  });

  it('a server redeployed to the other era is found again, both ways', async () => {
    const port = await freePort();
    let demo = await startDemoServer(['--port', String(port), '--strict-2026']);
    const { pool } = openPool([
      server('up', demo.url, { keepaliveIntervalMs: 1000, parkedProbeMs: 500 }),
    ]);
    const era = (want: string) => readyOn(pool, 'up', want);
    await era('2026-07-28');

    // Redeployed as 2025-11-25 only: a refused 2026-07-28 call asks server/discover again.
    await demo.stop();
    demo = await startDemoServer(['--port', String(port), '--only-2025']);
    await expect(
      pool.statelessSession('up').request('tools/list', {}, { idempotent: true }),
    ).rejects.toThrow(/-32000/);
    await era('2025-11-25');
    await expect(pool.taskProtocol('up')).resolves.toBe('2025-11-25');

    // And back: the session's keepalive fails, its reconnect is refused, discover finds 2026.
    await demo.stop();
    demo = await startDemoServer(['--port', String(port), '--strict-2026']);
    const back = await era('2026-07-28');
    expect(back.tools?.map((tool) => tool.name)).toContain('demo_task');
    expect(back.sessionSide).toBeUndefined();
  });

  it('a server run without a session gets its session back when redeployed as 2025-11-25', async () => {
    const port = await freePort();
    let demo = await startDemoServer(['--port', String(port), '--strict-2026']);
    const { pool } = openPool([
      server('plain', demo.url, { toolsets: [ordinaryToolset('plain')], parkedProbeMs: 500 }),
    ]);
    const served = (era: string) => readyOn(pool, 'plain', era);
    await served('2026-07-28');
    await expectStatelessSubmit(pool, 'plain');

    // Redeployed as 2025-11-25 only: the next stateless call is refused as such a server refuses
    // it, server/discover is refused too, and the session side serves again.
    await demo.stop();
    demo = await startDemoServer(['--port', String(port), '--only-2025']);
    const stateless = await pool.session('plain');
    await expect(stateless.callTool('demo_submit', {}, { idempotent: false })).rejects.toThrow(
      /-32000/,
    );
    await served('2025-11-25');
    const session = await pool.session('plain');
    expect(session.constructor.name).toBe('PooledSessionAdapter');
    const result = await session.callTool('demo_submit', {}, { idempotent: false });
    expect(result.structuredContent).toMatchObject({ status: 'running' });
  });
});

/** A stateless `tools/call` of the demo's ordinary submit tool answers with its handle. */
async function expectStatelessSubmit(pool: UpstreamPool, name: string): Promise<void> {
  const session = await pool.session(name);
  expect(session.constructor.name).toBe('StatelessToolSession');
  const result = await session.callTool('demo_submit', {}, { idempotent: false });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({
    task_id: expect.any(String),
    status: 'running',
  });
}

/** The server's status once it is ready on this era. */
function readyOn(pool: UpstreamPool, name: string, era: string) {
  return waitUntil(
    () => {
      const status = pool.status(name);
      return status.taskProtocol === era && status.state === 'ready' ? status : undefined;
    },
    `${name} to be ready on ${era}`,
    15_000,
  );
}
