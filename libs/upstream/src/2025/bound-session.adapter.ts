import type { CallToolResult, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamConnection } from './upstream.connection';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamRequestBrokenError,
  UpstreamSessionExpiredError,
} from '../upstream.errors';
import type { RequestOptions, UpstreamSession } from '../upstream.port';

/**
 * A failure after which the connection is not worth keeping (an RPC error or timeout is not, nor
 * one request's broken answer or HTTP error status: its connection checks the session's health
 * itself, connections.md requirement 6).
 */
export function breaksSession(error: unknown): boolean {
  if (error instanceof UpstreamRequestBrokenError || error instanceof UpstreamHttpError) {
    return false;
  }
  return error instanceof UpstreamSessionExpiredError || error instanceof UpstreamConnectionError;
}

/**
 * A session pinned to one connection: native tasks are bound to the MCP session that created
 * them, so these requests must never move to another session. A failure is reported (the owner
 * drops a broken connection) and never retried here: a task poll on a new session would only get
 * "Task not found".
 */
export class BoundSessionAdapter implements UpstreamSession {
  constructor(
    private readonly connection: UpstreamConnection,
    private readonly onFailure: (conn: UpstreamConnection, error: unknown) => void,
    private readonly onUse: () => void = () => undefined,
  ) {}

  get server(): string {
    return this.connection.server;
  }

  get sessionId(): string | undefined {
    return this.connection.sessionId;
  }

  get protocolVersion(): string | undefined {
    return this.connection.protocolVersion;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.connection.capabilities;
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<CallToolResult> {
    return this.run(() => this.connection.callTool(name, args, options));
  }

  request(
    method: string,
    params: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<unknown> {
    return this.run(() => this.connection.request(method, params, options));
  }

  private async run<T>(send: () => Promise<T>): Promise<T> {
    this.onUse();
    try {
      return await send();
    } catch (error) {
      this.onFailure(this.connection, error);
      throw error;
    } finally {
      this.onUse();
    }
  }
}
