import { PeriodicRun } from '@app/lifecycle';
import { GatewayMetrics } from './gateway-metrics';
import { PHASES } from './metrics.enum';

/** One row of the backlog query: numbers may arrive as strings (`bigint`/`numeric` from pg). */
export interface BacklogRow {
  readonly phase: string;
  readonly backlog: number | string;
  readonly oldest_due_age_seconds: number | string | null;
}

/** Options of {@link BacklogSampler}. */
export interface BacklogSamplerOptions {
  /** Runs ONE cheap SQL statement (written by persistence) returning a row per phase with work. */
  readonly query: () => Promise<readonly BacklogRow[]>;
  /** Optional: counts pollers with a fresh heartbeat, for `mcp_tasks_workers_alive`. */
  readonly countAliveWorkers?: () => Promise<number>;
  /** The gauges to update. */
  readonly metrics: Pick<GatewayMetrics, 'backlog' | 'oldestDueAge' | 'workersAlive'>;
  /** Time between samples. Default 15 s, one Prometheus scrape interval. */
  readonly intervalMs?: number;
  /** Told when a sample fails; the previous values stay exported. */
  readonly onError?: (err: unknown) => void;
}

/**
 * Samples the backlog gauges from the database on a timer, so a scrape never runs SQL and N
 * scrapers never become N queries (the "scrape storm" operations.md warns about). Samples never
 * overlap: the next one is scheduled only after the previous finished. The timer is unref'd so it
 * never holds a process open; call {@link stop} during shutdown before closing the pool.
 */
export class BacklogSampler {
  private readonly run: PeriodicRun;

  constructor(private readonly options: BacklogSamplerOptions) {
    this.run = new PeriodicRun(
      () => this.sampleOnce().catch((err: unknown) => this.options.onError?.(err)),
      options.intervalMs ?? 15_000,
    );
  }

  /** Takes a sample now and then every `intervalMs` until {@link stop}. Idempotent. */
  start(): void {
    this.run.start();
  }

  /** Cancels the timer and waits for a sample in progress, so the pool can close safely. */
  stop(): Promise<void> {
    return this.run.stop();
  }

  /**
   * Takes one sample. Phases absent from the result are set to 0: a drained phase returns no row,
   * and leaving its last value would show a backlog that no longer exists.
   */
  async sampleOnce(): Promise<void> {
    const { query, countAliveWorkers, metrics } = this.options;
    const [rows, alive] = await Promise.all([query(), countAliveWorkers?.()]);
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.phase);
      metrics.backlog.set({ phase: row.phase }, Number(row.backlog));
      metrics.oldestDueAge.set({ phase: row.phase }, Number(row.oldest_due_age_seconds ?? 0));
    }
    for (const phase of PHASES) {
      if (seen.has(phase)) continue;
      metrics.backlog.set({ phase }, 0);
      metrics.oldestDueAge.set({ phase }, 0);
    }
    if (alive !== undefined) metrics.workersAlive.set(alive);
  }
}
