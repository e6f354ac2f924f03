export { BacklogSampler } from './backlog-sampler';
export type { BacklogRow, BacklogSamplerOptions } from './backlog-sampler';
export { DatabaseProbe } from './database-probe';
export type { DatabaseProbeOptions } from './database-probe';
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
export {
  ATTEMPT_OUTCOMES,
  PHASES,
  SUBMIT_REFUSAL_REASONS,
  UPSTREAM_STATES,
  WEBHOOK_OUTCOMES,
} from './metrics.enum';
export type {
  AttemptOutcome,
  Phase,
  SubmitRefusalReason,
  UpstreamState,
  WebhookOutcome,
} from './metrics.enum';
export { MetricsModule } from './metrics.module';
export { MetricsService } from './metrics.service';
export { PeriodicRun } from './periodic-run';
export type { MetricsOptions } from './metrics.service';
