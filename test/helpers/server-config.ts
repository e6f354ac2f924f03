// The tests' one builder of a connection-layer server config (libs/config's ServerConfig): the
// pools the upstream and driver tests open, and the worker scripts they spawn (which receive it
// as JSON in SERVER_CONFIG, test/upstream/fixtures/fixture-env.ts).
import { DEFAULT_MAX_MESSAGE_BYTES, type ServerConfig } from '@app/config';

/**
 * A ServerConfig with test-sized defaults (stdio, 5 s timeouts, three connect attempts, no
 * keepalive, a parked server probed once a minute) and `partial` over them.
 */
export function serverConfig(partial: Partial<ServerConfig> & { name: string }): ServerConfig {
  return {
    transport: 'stdio',
    args: [],
    env: {},
    headers: {},
    connectTimeoutMs: 5000,
    callTimeoutMs: 5000,
    maxConcurrentCalls: 4,
    keepaliveIntervalMs: 0,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    parkedProbeMs: 60_000,
    connectAttempts: 3,
    sharedState: false,
    toolsets: [],
    ...partial,
  };
}
