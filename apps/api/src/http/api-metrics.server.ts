import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Settings } from '@app/config';
import { MetricsServer, MetricsService, startMetricsServer } from '@app/metrics';
import { SETTINGS } from '../settings.token';

/**
 * Serves the API's `/metrics` on METRICS_PORT, apart from the public port: metrics name
 * toolsets and routes, which are operators' business, and a NetworkPolicy can expose one port
 * to Prometheus only.
 */
@Injectable()
export class ApiMetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: MetricsServer;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly metrics: MetricsService,
  ) {}

  /** The bound port (METRICS_PORT=0 picks a free one, as tests do). */
  get port(): number | undefined {
    return this.server?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    this.server = await startMetricsServer(this.metrics.registry, this.settings.http.metricsPort);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.server?.close();
  }
}
