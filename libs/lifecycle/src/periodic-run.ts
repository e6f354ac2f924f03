/**
 * Runs one async step now and then every `intervalMs`, never overlapping: the next run is
 * scheduled only after the previous one settled. The timer is unref'd so it never holds a process
 * open; {@link stop} cancels it and waits for a run in progress, so a pool can close safely after.
 * Shared by the samplers that feed gauges from the database and the poller's periodic jobs
 * (sweeps, retention).
 */
export class PeriodicRun {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  /** `step` must not reject: handle its errors inside it. */
  constructor(
    private readonly step: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  /** Runs the step now and then every interval until {@link stop}. Idempotent. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tick();
  }

  /** Cancels the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tick(): void {
    this.running = this.step().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      this.timer = setTimeout(() => this.tick(), this.intervalMs);
      this.timer.unref();
    });
  }
}
