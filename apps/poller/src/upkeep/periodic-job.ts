/**
 * One of the poller's periodic jobs (the backlog sampler, retention of tasks and of events, the
 * catalog sweep, the deadline sweep): work on its own timer that keeps the shared tables and
 * gauges truthful, whichever poller runs it. The lifecycle gets them as one list,
 * {@link PERIODIC_JOBS}, starts them in its order once the worker is registered and claiming,
 * and stops them together after the drain, before the worker row is marked stopped and the
 * database pool closes (docs/leases.md, "Graceful shutdown").
 */
export interface PeriodicJob {
  /** Names the job in tests and logs. */
  readonly name: string;
  /** Starts the timer; the first run may start at once. Called once, after registration. */
  start(): void;
  /** Cancels the timer and waits for a run in progress: the pool may close right after. */
  stop(): Promise<void>;
}

/** The poller's periodic jobs (`PeriodicJob[]`), in the order they start. */
export const PERIODIC_JOBS = Symbol('PERIODIC_JOBS');
