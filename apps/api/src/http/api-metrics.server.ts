import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { Settings, SETTINGS } from '@app/config';
import { DatabaseProbe, MetricsServer, MetricsService, startMetricsServer } from '@app/metrics';
import { Database } from '@app/persistence';

/**
 * Serves the API's `/metrics` on METRICS_PORT, apart from the public port: metrics name
 * toolsets and routes, which are operators' business, and a NetworkPolicy can expose one port
 * to Prometheus only. Also exports the refusal counters at 0 from start-up and pings the
 * database on a timer for `mcp_tasks_database_up`.
 */
@Injectable()
export class ApiMetricsServer
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  private server?: MetricsServer;
  private readonly probe: DatabaseProbe;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: MetricsService,
    db: Database,
  ) {
    metrics.metrics.primeApiSeries();
    this.probe = new DatabaseProbe({
      ping: () => db.ping(),
      metrics: metrics.metrics,
    });
  }

  /** The bound port (METRICS_PORT=0 picks a free one, as tests do). */
  get port(): number | undefined {
    return this.server?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.server = await startMetricsServer(this.metrics.registry, this.settings.http.metricsPort);
    this.probe.start();
  }

  /** The probe stops before the pool closes (persistence closes it on shutdown). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.probe.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
