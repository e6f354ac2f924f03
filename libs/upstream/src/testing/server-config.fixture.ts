import { DEFAULT_MAX_MESSAGE_BYTES, type ServerConfig } from '@app/config';

/**
 * A Streamable HTTP server entry for the connection layer's unit specs, as the mcpServers loader
 * would resolve it, with `overrides` on top. Test-only; not exported by the library.
 */
export function httpServerConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return {
    name: 'up',
    transport: 'http',
    url: 'http://127.0.0.1:9/mcp',
    args: [],
    env: {},
    headers: {},
    connectTimeoutMs: 1000,
    callTimeoutMs: 2000,
    maxConcurrentCalls: 4,
    keepaliveIntervalMs: 30000,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    parkedProbeMs: 300000,
    connectAttempts: 3,
    sharedState: false,
    toolsets: [],
    ...overrides,
  };
}
