import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { McpServersConfig, SETTINGS, Settings } from '@app/config';
import { DatabaseProbe, MetricsServer, MetricsService, startMetricsServer } from '@app/metrics';
import { Database } from '@app/persistence';
import { ClaimLoopService } from './claiming/claim-loop.service';
import { MCP_SERVERS } from './poller.tokens';

/**
 * The poller's only listening port: `/metrics`, `/healthz/live` (no I/O) and `/healthz/ready`
 * (the database answers and the worker is claiming; 503 while draining). It also exports the
 * labelled counters at 0 from start-up and pings the database for `mcp_tasks_database_up`,
 * from boot on: a poller waiting for its database must show it.
 */
@Injectable()
export class PollerHealthServer
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private server?: MetricsServer;
  private draining = false;
  private readonly probe: DatabaseProbe;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(MCP_SERVERS) servers: McpServersConfig,
    private readonly metrics: MetricsService,
    private readonly db: Database,
    private readonly loop: ClaimLoopService,
  ) {
    metrics.metrics.primePollerSeries(
      [...servers.toolsets.keys()],
      servers.servers.map((s) => s.name),
    );
    this.probe = new DatabaseProbe({
      ping: () => db.ping(),
      metrics: metrics.metrics,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.server = await startMetricsServer(this.metrics.registry, this.settings.http.metricsPort, {
      '/healthz/live': () => ({ status: 200, body: { status: 'ok' } }),
      '/healthz/ready': () => this.ready(),
    });
    this.probe.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    await this.probe.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }

  private async ready(): Promise<{ status: number; body: unknown }> {
    if (this.draining) return { status: 503, body: { status: 'draining' } };
    const database = await this.db.health();
    if (database !== 'writable') {
      const status =
        database === 'read-only' ? 'database takes no writes' : 'database not reachable';
      return { status: 503, body: { status, claiming: this.loop.engine.isClaiming } };
    }
    // Ready means doing the job: the claim loop starts only after the database answered and
    // the worker registered, and stops first on SIGTERM.
    if (!this.loop.engine.isClaiming)
      return { status: 503, body: { status: 'starting', claiming: false } };
    return { status: 200, body: { status: 'ok', claiming: true } };
  }
}
