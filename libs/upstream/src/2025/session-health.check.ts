import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import { describe } from '../failure.classifier';
import type { UpstreamConnection } from './upstream.connection';
import { UpstreamRpcError, UpstreamTimeoutError } from '../upstream.errors';

const checking = new WeakSet<UpstreamConnection>();

/**
 * After one request's answer broke off: is the session itself still usable? A `ping` answers
 * that; any JSON-RPC answer (even method-not-found) proves the server and the session alive.
 * Calls `onDead` with the reason when it is not, so only a session-level failure tears the
 * session down (connections.md requirement 6). One check per connection at a time: a burst of
 * broken streams from one dying server costs one ping.
 */
export function checkSessionAfterBreak(
  conn: UpstreamConnection,
  config: Pick<ServerConfig, 'callTimeoutMs' | 'connectTimeoutMs'>,
  onDead: (reason: string) => void,
): void {
  if (checking.has(conn) || !conn.alive) return;
  checking.add(conn);
  const timeoutMs = Math.min(config.callTimeoutMs, config.connectTimeoutMs);
  conn
    .request('ping', {}, { idempotent: true, timeoutMs })
    .then(
      () => undefined,
      (error: unknown) => {
        if (
          error instanceof UpstreamRpcError &&
          error.code === (ErrorCode.MethodNotFound as number)
        ) {
          return;
        }
        const kind = error instanceof UpstreamTimeoutError ? 'timed out' : describe(error);
        if (conn.alive) onDead(`session check after a broken answer failed: ${kind}`);
      },
    )
    .finally(() => checking.delete(conn));
}
