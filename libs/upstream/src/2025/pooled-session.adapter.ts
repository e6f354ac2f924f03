import type { CallToolResult, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { ServerSupervisor } from './server.supervisor';
import type { UpstreamConnection } from './upstream.connection';
import { UpstreamSessionExpiredError } from '../upstream.errors';
import type { RequestOptions, UpstreamSession } from '../upstream.port';

/**
 * The pooled session of one server (requirement 12): every request goes to the supervisor's
 * current connection, so callers keep one object across reconnects. A forgotten session (HTTP 404)
 * is re-initialized and an idempotent request retried once (requirements 7, 8); anything else is
 * never replayed.
 */
export class PooledSessionAdapter implements UpstreamSession {
  constructor(private readonly supervisor: ServerSupervisor) {}

  get server(): string {
    return this.supervisor.server;
  }

  get sessionId(): string | undefined {
    return this.supervisor.currentConnection?.sessionId;
  }

  get protocolVersion(): string | undefined {
    return this.supervisor.currentConnection?.protocolVersion;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.supervisor.currentConnection?.capabilities;
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<CallToolResult> {
    return this.run(options, (conn) => conn.callTool(name, args, options));
  }

  request(
    method: string,
    params: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<unknown> {
    return this.run(options, (conn) => conn.request(method, params, options));
  }

  private async run<T>(
    options: RequestOptions,
    send: (conn: UpstreamConnection) => Promise<T>,
  ): Promise<T> {
    const conn = this.supervisor.currentOrThrow();
    try {
      return await send(conn);
    } catch (error) {
      this.supervisor.reportFailure(conn, error);
      if (!(error instanceof UpstreamSessionExpiredError) || !options.idempotent) throw error;
      // Once: a second 404 on a fresh session is a server problem, not an expiry.
      return send(await this.supervisor.ready());
    }
  }
}
