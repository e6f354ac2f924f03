import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { McpServersConfig } from '@app/config';
import { CatalogBuilder } from '@app/drivers';
import { ServerStatus, UpstreamPool } from '@app/mcp';
import { CatalogRepository } from '@app/persistence';
import { MCP_SERVERS } from './poller.tokens';
import { UpstreamEventsRelay } from './upstream-events.relay';

/**
 * Publishes the toolset catalog the API validates submits against: after every connect and
 * tools/list_changed refresh, and whenever a server's state changes (a parked server's toolsets
 * become unavailable with the reason). Publishes are serialized per server and coalesced, so a
 * flapping server costs one write per round trip, and a failed publish never touches the pool.
 */
@Injectable()
export class CatalogPublisherService {
  private readonly builder = new CatalogBuilder();
  private readonly pending = new Map<string, ServerStatus>();
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    @Inject(MCP_SERVERS) private readonly config: McpServersConfig,
    private readonly pool: UpstreamPool,
    private readonly relay: UpstreamEventsRelay,
    private readonly catalog: CatalogRepository,
    private readonly log: PinoLogger,
  ) {}

  /** Subscribes to the pool; call before the pool starts so no first connect is missed. */
  subscribe(): void {
    this.pool.onToolsChanged((status) => this.schedule(status));
    this.relay.onState((server) => {
      // A transient 'connecting' between two ready states changes nothing consumers can act on.
      const status = this.pool.status(server);
      if (status.state !== 'connecting') this.schedule(status);
    });
  }

  /** Waits for publishes in progress (shutdown, before the database pool closes). */
  async idle(): Promise<void> {
    await Promise.all(this.running.values());
  }

  private schedule(status: ServerStatus): void {
    this.pending.set(status.server, status);
    if (this.running.has(status.server)) return;
    const run = this.drain(status.server).finally(() => this.running.delete(status.server));
    this.running.set(status.server, run);
  }

  private async drain(server: string): Promise<void> {
    for (let status = this.pending.get(server); status; status = this.pending.get(server)) {
      this.pending.delete(server);
      const config = this.config.servers.find((s) => s.name === server);
      if (!config) return;
      try {
        await this.catalog.publish(this.builder.buildForServer(config, status));
        this.log.info({ server, state: status.state }, 'catalog published');
      } catch (error) {
        this.log.warn({ err: error, server }, 'catalog publish failed');
      }
    }
  }
}
