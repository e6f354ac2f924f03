import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import { describe } from '../failure.classifier';
import { sessionAnswered } from './session-health.check';
import type { UpstreamConnection } from './upstream.connection';
import { UpstreamRpcError, UpstreamTimeoutError } from '../upstream.errors';
import type { UpstreamLogger } from '../upstream.hooks';

/**
 * Keepalive for an idle HTTP session (requirement 11). It pings only when no request is in flight
 * and nothing happened for keepaliveIntervalMs: a ping racing a request can wedge a stream, and a
 * busy session proves itself. A server without `ping` (-32601) is probed with tools/list instead,
 * never reconnected for it. stdio has no keepalive: the child's liveness is the signal.
 */
export class KeepaliveMonitor {
  private timer?: NodeJS.Timeout;
  private watched?: UpstreamConnection;
  private pingUnsupported = false;

  constructor(
    private readonly config: ServerConfig,
    private readonly logger: UpstreamLogger,
    private readonly onFailure: (conn: UpstreamConnection, reason: string) => void,
  ) {}

  watch(conn: UpstreamConnection): void {
    this.stop();
    if (this.config.transport === 'stdio' || !(this.config.keepaliveIntervalMs > 0)) return;
    this.watched = conn;
    this.schedule(this.config.keepaliveIntervalMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.watched = undefined;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => void this.tick(), Math.max(1, delayMs)).unref();
  }

  private async tick(): Promise<void> {
    const conn = this.watched;
    if (!conn) return;
    const interval = this.config.keepaliveIntervalMs;
    const idleFor = Date.now() - conn.lastActivity;
    if (conn.pendingRequests > 0 || idleFor < interval) {
      return this.schedule(conn.pendingRequests > 0 ? interval : interval - idleFor);
    }
    try {
      await this.probe(conn);
    } catch (error) {
      if (this.watched !== conn) return;
      if (
        error instanceof UpstreamRpcError &&
        error.code === (ErrorCode.MethodNotFound as number)
      ) {
        this.pingUnsupported = true;
        this.logger.info({ server: conn.server }, 'upstream has no ping; probing with tools/list');
      } else if (!sessionAnswered(error)) {
        const kind = error instanceof UpstreamTimeoutError ? 'timed out' : describe(error);
        return this.onFailure(conn, `keepalive failed: ${kind}`);
      }
    }
    if (this.watched === conn) this.schedule(interval);
  }

  private async probe(conn: UpstreamConnection): Promise<void> {
    const options = {
      idempotent: true,
      timeoutMs: Math.min(this.config.callTimeoutMs, this.config.connectTimeoutMs),
    };
    if (this.pingUnsupported) await conn.request('tools/list', {}, options);
    else await conn.request('ping', {}, options);
  }
}
