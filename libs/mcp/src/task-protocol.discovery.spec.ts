// Guards against a server's task design being guessed wrong, or a transient failure being cached
// as "2025-11-25" for the life of the process.
import { TaskProtocolDiscovery } from './task-protocol.discovery';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamRpcError,
  UpstreamUnavailableError,
} from './upstream.errors';
import type { StatelessSession } from './upstream.port';
import { httpServerConfig } from './testing/server-config.fixture';

const DISCOVERED = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
  ttlMs: 0,
  cacheScope: 'public',
};

const TOOLS = { resultType: 'complete', tools: [{ name: 'ask', inputSchema: { type: 'object' } }] };

function discoveryAnswering(...answers: Array<() => Record<string, unknown>>) {
  const asked: string[] = [];
  const discovered: string[] = [];
  const session: StatelessSession = {
    server: 'up',
    request: (method) => {
      asked.push(method);
      const next = answers.shift();
      return new Promise((resolve) => resolve(next ? next() : {}));
    },
  };
  const discovery = new TaskProtocolDiscovery(
    () => session,
    (server) => discovered.push(server),
  );
  return { discovery, asked, discovered };
}

describe('TaskProtocolDiscovery', () => {
  it('the extension in server/discover means 2026-07-28, asked once and cached', async () => {
    const { discovery, asked, discovered } = discoveryAnswering(
      () => DISCOVERED,
      () => TOOLS,
    );
    await expect(discovery.protocolOf(httpServerConfig())).resolves.toBe('2026-07-28');
    await expect(discovery.protocolOf(httpServerConfig())).resolves.toBe('2026-07-28');
    // The tools that side lists are read once too, for the catalog.
    expect(asked).toEqual(['server/discover', 'tools/list']);
    expect(discovery.toolsOf('up')).toEqual(TOOLS.tools);
    expect(discovered).toEqual(['up']);
    expect(discovery.known(httpServerConfig())).toBe('2026-07-28');
  });

  it('no extension, a JSON-RPC error or an HTTP refusal means 2025-11-25', async () => {
    const noExtension = { ...DISCOVERED, capabilities: { tools: {} } };
    for (const answer of [
      () => noExtension,
      () => {
        throw new UpstreamRpcError('up', -32601, 'Method not found');
      },
      () => {
        throw new UpstreamHttpError('up', 400);
      },
    ]) {
      const { discovery } = discoveryAnswering(answer);
      await expect(discovery.protocolOf(httpServerConfig())).resolves.toBe('2025-11-25');
    }
  });

  it('an unreachable server or a 401 decides nothing: thrown, asked again next time', async () => {
    const { discovery, asked } = discoveryAnswering(
      () => {
        throw new UpstreamConnectionError('up', 'refused', false);
      },
      () => {
        throw new UpstreamHttpError('up', 401);
      },
      () => DISCOVERED,
      () => TOOLS,
    );
    await expect(discovery.protocolOf(httpServerConfig())).rejects.toBeInstanceOf(
      UpstreamUnavailableError,
    );
    await expect(discovery.protocolOf(httpServerConfig())).rejects.toBeInstanceOf(
      UpstreamUnavailableError,
    );
    expect(discovery.known(httpServerConfig())).toBeUndefined();
    await expect(discovery.protocolOf(httpServerConfig())).resolves.toBe('2026-07-28');
    expect(asked).toHaveLength(4);
  });

  it('a pinned protocolVersion is not asked about (2026-07-28: only its tools); stdio is 2025', async () => {
    const { discovery, asked } = discoveryAnswering(() => TOOLS);
    await expect(
      discovery.protocolOf(httpServerConfig({ protocolVersion: '2026-07-28' })),
    ).resolves.toBe('2026-07-28');
    expect(asked).toEqual(['tools/list']);
    asked.length = 0;
    await expect(
      discovery.protocolOf(httpServerConfig({ protocolVersion: '2025-11-25' })),
    ).resolves.toBe('2025-11-25');
    await expect(discovery.protocolOf(httpServerConfig({ transport: 'stdio' }))).resolves.toBe(
      '2025-11-25',
    );
    expect(asked).toEqual([]);
  });
});
