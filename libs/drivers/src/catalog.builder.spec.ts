// Guards the catalog's availability rules and that reasons never leak URLs or secrets.
import { Contract } from '@app/common';
import type { ServerStatus } from '@app/upstream';
import type { ToolsetConfig } from '@app/config';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { CatalogBuilder } from './catalog.builder';
import { ORDINARY, serverConfig } from './testing/fake-upstream';

const schema = { type: 'object' as const, properties: { a: { type: 'number' } } };
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  description: `${name} does things`,
  inputSchema: schema,
  ...extra,
});
const TOOLS = [
  tool('demo_submit'),
  tool('demo_status'),
  tool('demo_cancel'),
  tool('demo_task_required', { execution: { taskSupport: 'required' } }),
  tool('demo_echo'),
  tool('demo_slow'),
];
const READY: ServerStatus = {
  server: 'demo',
  state: 'ready',
  tools: TOOLS,
  capabilities: { tasks: { requests: { tools: { call: {} } } } },
};
const tasks = (name: string, t: string): ToolsetConfig => ({
  name,
  server: 'demo',
  contract: Contract.McpTasks,
  tool: t,
  retryOnCrash: false,
});
const sync = (t: string): ToolsetConfig => ({
  name: 'slow',
  server: 'demo',
  contract: Contract.SyncCall,
  tool: t,
  callTimeoutMs: 1000,
  retryOnCrash: false,
});

describe('CatalogBuilder', () => {
  const builder = new CatalogBuilder();

  it('a session refused by a server that serves 2026-07-28 says how to run without one', () => {
    const serving: ServerStatus = { ...READY, taskProtocol: '2026-07-28' };
    const refused: ServerStatus = { server: 'demo', state: 'parked', reason: 'initialize refused' };
    const connecting: ServerStatus = { server: 'demo', state: 'connecting', reason: 'starting' };
    const [parked] = builder.build([sync('demo_slow')], { ...serving, sessionSide: refused });
    expect(parked.available).toBe(false);
    expect(parked.unavailableReason).toBe(
      'server unavailable: initialize refused; the server serves MCP 2026-07-28: pin it ' +
        '("protocolVersion": "2026-07-28") to run this toolset without a session',
    );
    // Not while the session is still being opened, nor when the whole server is away.
    const [waiting] = builder.build([sync('demo_slow')], { ...serving, sessionSide: connecting });
    expect(waiting.unavailableReason).toBe('server unavailable: starting');
    const away = { ...refused, sessionSide: refused };
    expect(builder.build([sync('demo_slow')], away)[0].unavailableReason).toBe(
      'server unavailable: initialize refused',
    );
  });

  it('publishes an available ordinary toolset with the submit tool description and schema', () => {
    const [entry] = builder.build([ORDINARY], READY);
    expect(entry).toMatchObject({
      name: 'jobs',
      server: 'demo',
      contract: Contract.Ordinary,
      inputSchema: schema,
      available: true,
      unavailableReason: null,
    });
    expect(entry.description).toMatch(/^demo_submit does things\n\n.*contract ordinary/s);
  });

  it('marks a missing tool, naming it', () => {
    const missingStatus = { ...ORDINARY, statusTool: 'nope' } as ToolsetConfig;
    expect(builder.build([missingStatus, sync('gone')], READY)).toMatchObject([
      { available: false, unavailableReason: 'tool "nope" is not offered by the server' },
      { available: false, unavailableReason: 'tool "gone" is not offered by the server' },
    ]);
  });

  it('marks an mcp-tasks tool without task support, and a server without the capability', () => {
    expect(
      builder.build([tasks('t', 'demo_echo'), tasks('r', 'demo_task_required')], READY),
    ).toMatchObject([
      { available: false, unavailableReason: 'tool "demo_echo" does not support tasks' },
      { available: true },
    ]);
    const noCap = { ...READY, capabilities: {} };
    expect(builder.build([tasks('r', 'demo_task_required')], noCap)[0].unavailableReason).toBe(
      'server does not declare tasks capability',
    );
  });

  it('marks every toolset of a parked server with the reason, without URLs or secrets', () => {
    const parked: ServerStatus = {
      server: 'demo',
      state: 'parked',
      reason: 'HTTP 401 from https://user:pw@reports.internal/mcp?token=abc (Bearer s3cr3t-value)',
    };
    const server = { ...serverConfig(), headers: { Authorization: 'Bearer s3cr3t-value' } };
    server.toolsets = [ORDINARY, sync('demo_slow')];
    const entries = builder.buildForServer(server, parked);
    expect(entries.map((entry) => entry.available)).toEqual([false, false]);
    expect(entries[0].unavailableReason).toBe(
      'server unavailable: HTTP 401 from <url> (<redacted>)',
    );
    expect(entries[0].inputSchema).toEqual({ type: 'object' });
  });

  it('a server that is connecting without tools is unavailable, naming its state', () => {
    const status: ServerStatus = { server: 'demo', state: 'connecting' };
    expect(builder.build([ORDINARY], status)[0].unavailableReason).toBe(
      'server unavailable: connecting',
    );
  });
});
