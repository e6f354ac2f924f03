// Guards against a 2026-07-28-only upstream being run through a 2025-11-25 session (initialize
// refused with -32020, the server parked), a 2025-11-25-only upstream losing its session side,
// and a server redeployed to the other era going unnoticed (docs/connections.md, "Which side
// serves").
import type { ServerConfig, ToolsetConfig } from '@app/config';
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
    // An ordinary toolset beside it needs a session the server refuses: only it is unavailable.
    await waitUntil(
      () => (pool.status('mixed').sessionSide?.state === 'parked' ? true : undefined),
      'the mixed server session side to park',
    );
    const mixed = pool.status('mixed');
    const rows = new CatalogBuilder().build(
      [nativeToolset('mixed'), ordinaryToolset('mixed')],
      mixed,
    );
    expect(rows.map((row) => [row.name, row.available])).toEqual([
      ['mixed-native', true],
      ['mixed-ordinary', false],
    ]);
    expect(rows[1].unavailableReason).toMatch(/-32020/);
    expect(rows[1].unavailableReason).toContain('pin it ("protocolVersion": "2026-07-28")');
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
    const era = (want: string) =>
      waitUntil(
        () => {
          const status = pool.status('up');
          return status.taskProtocol === want && status.state === 'ready' ? status : undefined;
        },
        `the server to be ready on ${want}`,
        15_000,
      );
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
});
