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
 * One `ping` of `conn` within a session check's deadline (the shorter of a call's and a
 * connect's): resolves undefined when the session answered (any JSON-RPC answer, see
 * {@link sessionAnswered}), else with the failure. Never rejects.
 */
export async function pingSession(
  conn: UpstreamConnection,
  config: Pick<ServerConfig, 'callTimeoutMs' | 'connectTimeoutMs'>,
): Promise<unknown> {
  const timeoutMs = Math.min(config.callTimeoutMs, config.connectTimeoutMs);
  try {
    await conn.request('ping', {}, { idempotent: true, timeoutMs });
    return undefined;
  } catch (error) {
    return sessionAnswered(error) ? undefined : error;
  }
}

/**
 * After one request's answer broke off, or was an HTTP error status: is the session itself still
 * usable? A `ping` answers that ({@link pingSession}).
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
  void pingSession(conn, config)
    .then((failure) => {
      if (failure === undefined) return;
      const kind = failure instanceof UpstreamTimeoutError ? 'timed out' : describe(failure);
      if (conn.alive) onDead(`the session check (ping) after a failed request: ${kind}`);
    })
    .finally(() => checking.delete(conn));
}
