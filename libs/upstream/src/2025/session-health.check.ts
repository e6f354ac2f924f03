import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import { describe } from '../failure.classifier';
import type { UpstreamConnection } from './upstream.connection';
import { UpstreamHttpError, UpstreamRpcError, UpstreamTimeoutError } from '../upstream.errors';

const checking = new WeakSet<UpstreamConnection>();

/**
 * Whether a failed ping still shows the session alive: method-not-found is a JSON-RPC answer from
 * it, and a 429 is the server (or its proxy) asking for fewer requests, which a new session would
 * only add to (connections.md requirement 6).
 */
export function sessionAnswered(error: unknown): boolean {
  if (error instanceof UpstreamRpcError) return error.code === (ErrorCode.MethodNotFound as number);
  return error instanceof UpstreamHttpError && error.status === 429;
}

/**
 * After one request's answer broke off, or was an HTTP error status: is the session itself still
 * usable? A `ping` answers that; any JSON-RPC answer (even method-not-found) proves the server
 * and the session alive.
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
        if (sessionAnswered(error)) return;
        const kind = error instanceof UpstreamTimeoutError ? 'timed out' : describe(error);
        if (conn.alive) onDead(`the session check (ping) after a failed request: ${kind}`);
      },
    )
    .finally(() => checking.delete(conn));
}
