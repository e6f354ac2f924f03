import { PeriodicRun } from '@app/lifecycle';
import { GatewayMetrics } from './gateway-metrics';

/** Options of {@link DatabaseProbe}. */
export interface DatabaseProbeOptions {
  /** Whether the database answered in time and took writes: `Database.ping`, as readiness uses it. */
  readonly ping: () => Promise<boolean>;
  /** The gauge to set: 1 after a ping answered in time (the database writable), 0 otherwise. */
  readonly metrics: Pick<GatewayMetrics, 'databaseUp'>;
  /** Time between pings. Default 15 s, one Prometheus scrape interval. */
  readonly intervalMs?: number;
}

/**
 * Feeds `mcp_tasks_database_up` from its own timer, independent of readiness probes and of the
 * work loop: a process that cannot reach Postgres still answers scrapes, and this gauge is how
 * the alert tells "database unreachable from the pollers/API" apart from "process down". The
 * gauge starts at 0 (nothing answered yet). Pings never overlap; the timer is unref'd.
 */
export class DatabaseProbe {
  private readonly run: PeriodicRun;

  constructor(private readonly options: DatabaseProbeOptions) {
    options.metrics.databaseUp.set(0);
    this.run = new PeriodicRun(async () => {
      await this.probeOnce();
    }, options.intervalMs ?? 15_000);
  }

  /** Pings now and then every `intervalMs` until {@link stop}. Idempotent. */
  start(): void {
    this.run.start();
  }

  /** Cancels the timer and waits for a ping in progress, so the pool can close safely. */
  stop(): Promise<void> {
    return this.run.stop();
  }

  /** One ping; resolves to whether the database answered in time (and sets the gauge). */
  async probeOnce(): Promise<boolean> {
    const up = await this.options.ping().catch(() => false);
    this.options.metrics.databaseUp.set(up ? 1 : 0);
    return up;
  }
}
