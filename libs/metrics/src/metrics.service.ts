import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { GatewayMetrics } from './gateway-metrics';

/** Options of {@link MetricsService}; see `MetricsModule.forRoot`. */
export interface MetricsOptions {
  /** Process and Node.js default metrics (`process_*`, `nodejs_*`). Default true. */
  readonly defaultMetrics?: boolean;
  /** Constant labels on every series, e.g. `{ app: 'poller' }`. Keep them low-cardinality. */
  readonly defaultLabels?: Readonly<Record<string, string>>;
}

/**
 * Owns the process's one prom-client registry. It deliberately does not use prom-client's global
 * registry: a fresh registry per service keeps tests that build several Nest apps in one process
 * free of "metric already registered" errors, while an app still has exactly one.
 */
@Injectable()
export class MetricsService {
  /** The registry every gateway metric is registered on; hand it to `startMetricsServer`. */
  readonly registry = new Registry();
  /** Typed handles to all gateway metrics. */
  readonly metrics: GatewayMetrics;

  constructor(options: MetricsOptions = {}) {
    if (options.defaultLabels) this.registry.setDefaultLabels({ ...options.defaultLabels });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.metrics = new GatewayMetrics(this.registry);
  }

  /** The Prometheus text exposition of every registered metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Content-Type header value matching {@link render}'s output. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
