import { DynamicModule, Module } from '@nestjs/common';
import { GatewayMetrics } from './gateway-metrics';
import { MetricsOptions, MetricsService } from './metrics.service';

/**
 * Provides {@link MetricsService} and {@link GatewayMetrics} to the whole app. Global, because
 * every module that does work also counts it, and importing the module everywhere would only
 * add noise; one `forRoot` in each root module keeps one registry per process.
 */
@Module({})
export class MetricsModule {
  /**
   * @param options default metrics on/off and constant labels.
   * @example imports: [MetricsModule.forRoot({ defaultLabels: { app: 'poller' } })]
   */
  static forRoot(options: MetricsOptions = {}): DynamicModule {
    return {
      module: MetricsModule,
      global: true,
      providers: [
        { provide: MetricsService, useFactory: () => new MetricsService(options) },
        {
          provide: GatewayMetrics,
          useFactory: (service: MetricsService) => service.metrics,
          inject: [MetricsService],
        },
      ],
      exports: [MetricsService, GatewayMetrics],
    };
  }
}
