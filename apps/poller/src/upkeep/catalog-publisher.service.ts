import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { McpServersConfig } from '@app/config';
import { CatalogBuilder } from '@app/drivers';
import { WakeSignal } from '@app/leasing';
import { ServerStatus, UpstreamPool } from '@app/upstream';
import { CatalogRepository } from '@app/persistence';
import { MCP_SERVERS } from '../poller.tokens';

/** The pause before a failed publish is tried again, doubled after each failure up to the most. */
const RETRY_FIRST_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * Publishes the toolset catalog the API validates submits against: after every connect and
 * tools/list_changed refresh, and whenever a server's state changes (a parked server's toolsets
 * become unavailable with the reason). Publishes are serialized per server and coalesced, so a
 * flapping server costs one write per round trip, and a failed publish never touches the pool.
 * A failed publish is tried again until it succeeds or a newer state supersedes it (a database
 * lost when a server connected would otherwise leave its toolsets unknown, or shown unavailable,
 * until the server's next change: docs/operations.md, "Starting before the database").
 */
@Injectable()
export class CatalogPublisherService {
  private readonly builder = new CatalogBuilder();
  private readonly pending = new Map<string, ServerStatus>();
  private readonly running = new Map<string, Promise<void>>();
  /** Poked at close: ends a retry's pause. */
  private readonly closing = new WakeSignal();
  private closed = false;

  constructor(
    @Inject(MCP_SERVERS) private readonly config: McpServersConfig,
    private readonly pool: UpstreamPool,
    private readonly catalog: CatalogRepository,
    private readonly log: PinoLogger,
  ) {}

  /** Subscribes to the pool; call before the pool starts so no first connect is missed. */
  subscribe(): void {
    this.pool.onToolsChanged((status) => this.schedule(status));
    this.pool.onStateChange((server, state) => {
      // A transient 'connecting' between two ready states changes nothing consumers can act on;
      // 'closed' is this worker shutting down, not the server going away.
      if (this.closed || state === 'connecting' || state === 'closed') return;
      this.schedule(this.pool.status(server));
    });
  }

  /** Stops publishing and waits for publishes in progress (shutdown, before the pool closes). */
  async close(): Promise<void> {
    this.closed = true;
    this.closing.poke();
    await Promise.all(this.running.values());
  }

  private schedule(status: ServerStatus): void {
    if (this.closed) return;
    this.pending.set(status.server, status);
    if (this.running.has(status.server)) return;
    const run = this.drain(status.server).finally(() => this.running.delete(status.server));
    this.running.set(status.server, run);
  }

  private async drain(server: string): Promise<void> {
    let retryInMs = RETRY_FIRST_MS;
    for (let status = this.pending.get(server); status; status = this.pending.get(server)) {
      this.pending.delete(server);
      const config = this.config.servers.find((s) => s.name === server);
      if (!config) return;
      try {
        await this.catalog.publish(this.builder.buildForServer(config, status));
        this.log.info({ server, state: status.state }, 'catalog published');
        retryInMs = RETRY_FIRST_MS;
      } catch (error) {
        if (this.closed) return;
        this.log.warn({ err: error, server, retryInMs }, 'catalog publish failed; trying again');
        // A state scheduled meanwhile is newer: it is published instead of this one.
        if (!this.pending.has(server)) this.pending.set(server, status);
        await this.closing.wait(retryInMs);
        if (this.closed) return;
        retryInMs = Math.min(retryInMs * 2, RETRY_MAX_MS);
      }
    }
  }
}
