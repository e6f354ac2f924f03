import { Provider } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { McpServersConfig } from '@app/config';
import { DriverRegistry } from '@app/drivers';
import { UpstreamPool } from '@app/upstream';
import { GatewayMetrics } from '@app/metrics';
import { MCP_SERVERS } from './poller.tokens';

/**
 * The connection layer and the drivers. Only the poller constructs an UpstreamPool: the API
 * never talks upstream. The pool reports through callbacks, wired here to the gateway metrics;
 * the catalog publisher subscribes to state changes on the pool itself.
 */
export const UPSTREAM_PROVIDERS: Provider[] = [
  {
    provide: UpstreamPool,
    inject: [MCP_SERVERS, GatewayMetrics, PinoLogger],
    useFactory: (config: McpServersConfig, metrics: GatewayMetrics, log: PinoLogger) =>
      new UpstreamPool(config.servers, log.logger.child({ component: 'upstream' }), {
        onState: (server, state) => metrics.setUpstreamState(server, state),
        onReconnect: (server, reason) => metrics.upstreamReconnects.inc({ server, reason }),
        onCallDuration: (server, operation, seconds) =>
          metrics.upstreamCallDuration.observe({ server, operation }, seconds),
      }),
  },
  {
    provide: DriverRegistry,
    inject: [UpstreamPool],
    useFactory: (pool: UpstreamPool) => DriverRegistry.forPort(pool),
  },
];
