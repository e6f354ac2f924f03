export { BacklogSampler } from './backlog-sampler';
export { DatabaseProbe } from './database-probe';
export { GatewayMetrics } from './gateway-metrics';
export { METRIC_DEFINITIONS, METRIC_NAMES } from './metric-names';
export { startMetricsServer } from './metrics-server';
export type { MetricsServer } from './metrics-server';
export type { AttemptOutcome, SubmitRefusalReason, WebhookOutcome } from './metrics.enum';
export { MetricsModule } from './metrics.module';
export { MetricsService } from './metrics.service';
