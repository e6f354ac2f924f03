// Guards the catalog against a real server: missing tools, tools without task support, parked servers.
import { Contract } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import { CatalogBuilder } from '@app/drivers';
import { waitUntil } from '../helpers/wait';
import { NATIVE, ORDINARY, SLOW, cleanup, startPool, stdioServer } from './driver-harness.helper';

afterEach(async () => {
  await cleanup();
});

const builder = new CatalogBuilder();

describe('catalog from a live server', () => {
  it('reports available toolsets, a missing tool and a tool without task support', async () => {
    const toolsets: ToolsetConfig[] = [
      ORDINARY,
      NATIVE,
      SLOW,
      { ...ORDINARY, name: 'broken', cancelTool: 'demo_cancel_missing' } as ToolsetConfig,
      { ...NATIVE, name: 'echo-tasks', tool: 'demo_echo' } as ToolsetConfig,
    ];
    const server = stdioServer(toolsets);
    const pool = startPool(server);
    await pool.session('demo');
    const entries = builder.buildForServer(server, pool.status('demo'));
    expect(entries.map((entry) => [entry.name, entry.available, entry.unavailableReason])).toEqual([
      ['jobs', true, null],
      ['native', true, null],
      ['slow', true, null],
      ['broken', false, 'tool "demo_cancel_missing" is not offered by the server'],
      ['echo-tasks', false, 'tool "demo_echo" does not support tasks'],
    ]);
    const jobs = entries[0];
    expect(jobs.contract).toBe(Contract.Ordinary);
    expect(jobs.description).toMatch(/^Starts a demo background job/);
    expect(jobs.description).toMatch(/contract ordinary/);
    expect(jobs.inputSchema).toMatchObject({ type: 'object', properties: { duration_ms: {} } });
  });

  it('reports a parked server with its reason, never a secret value', async () => {
    const server: ServerConfig = {
      ...stdioServer([ORDINARY, SLOW]),
      command: '/nonexistent/mcp-server-binary',
      env: { API_TOKEN: 'sekret-token-value' },
      connectAttempts: 1,
    };
    const pool = startPool(server);
    await waitUntil(
      () => (pool.status('demo').state === 'parked' ? true : undefined),
      'the server to park',
    );
    const entries = builder.buildForServer(server, pool.status('demo'));
    for (const entry of entries) {
      expect(entry.available).toBe(false);
      expect(entry.unavailableReason).toMatch(/^server unavailable: .*(ENOENT|not found|spawn)/i);
      expect(entry.unavailableReason).not.toContain('sekret-token-value');
    }
  });
});
