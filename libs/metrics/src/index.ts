export { BacklogSampler } from './backlog-sampler';
export type { BacklogRow, BacklogSamplerOptions } from './backlog-sampler';
export { GatewayMetrics } from './gateway-metrics';
export { METRIC_DEFINITIONS, METRIC_NAMES } from './metric-names';
export type { MetricDefinition, MetricName } from './metric-names';
export { startMetricsServer } from './metrics-server';
export type {
  MetricsRouteHandler,
  MetricsServer,
  MetricsServerOptions,
  RouteResult,
} from './metrics-server';
export { ATTEMPT_OUTCOMES, PHASES, UPSTREAM_STATES, WEBHOOK_OUTCOMES } from './metrics.enum';
export type { AttemptOutcome, Phase, UpstreamState, WebhookOutcome } from './metrics.enum';
export { MetricsModule } from './metrics.module';
export { MetricsService } from './metrics.service';
export type { MetricsOptions } from './metrics.service';
