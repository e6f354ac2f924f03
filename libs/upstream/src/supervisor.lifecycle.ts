import type { ServerConfig } from '@app/config';
import type { BackoffPolicy } from './backoff.policy';
import type { FailureClass } from './failure.classifier';
import type { UpstreamLogger, UpstreamMetricHooks } from './upstream.hooks';
import type { SupervisorState } from './upstream.port';

/** Work may revive a parked server, but a burst of work must not become a burst of probes. */
export const MAX_WORK_PROBE_GAP_MS = 5000;

export interface LifecycleDeps {
  config: ServerConfig;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  backoff: BackoffPolicy;
  /** Log lines name the side (`session` or `2026`) when a server has two. */
  side: string;
  /** One attempt; it ends by calling `succeeded` or `failed`, or not at all when stopped. */
  attemptOnce(): Promise<void>;
}

/**
 * The states, backoff, parking and probes of one side of a server (connections.md requirements
 * 1, 4 and 13), shared by the 2025-11-25 session supervisor and the 2026-07-28 one: what an
 * attempt is differs, how attempts are scheduled does not.
 */
export class SupervisorLifecycle {
  private current: SupervisorState = 'connecting';
  private why?: string = 'not started';
  private failures = 0;
  private everReady = false;
  private running = false;
  private lastProbeAt = 0;
  private retryTimer?: NodeJS.Timeout;
  private probeTimer?: NodeJS.Timeout;
  private attempt?: Promise<void>;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly deps: LifecycleDeps) {}

  get state(): SupervisorState {
    return this.current;
  }

  get reason(): string | undefined {
    return this.why;
  }

  get started(): boolean {
    return this.running;
  }

  get attempting(): boolean {
    return this.attempt !== undefined;
  }

  /** Starts the first attempt; false when already running or closed. */
  start(reason = 'starting'): boolean {
    if (this.running || this.current === 'closed') return false;
    this.running = true;
    this.transition('connecting', reason);
    void this.runAttempt();
    return true;
  }

  /** Puts a side to rest (its server now speaks the other era): no timers, no attempts. */
  stop(reason: string): void {
    if (this.current === 'closed') return;
    this.running = false;
    this.failures = 0;
    this.everReady = false;
    this.clearTimers();
    this.transition('connecting', reason);
  }

  close(): void {
    this.running = false;
    this.clearTimers();
    this.transition('closed', 'pool closed');
  }

  /** The attempt in flight, or a new one. */
  runAttempt(): Promise<void> {
    this.attempt ??= this.deps.attemptOnce().finally(() => {
      this.attempt = undefined;
      this.notify();
    });
    return this.attempt;
  }

  /** Awaited after the attempt, if any, ends. */
  async settled(): Promise<void> {
    await this.attempt?.catch(() => undefined);
  }

  /** A request proved the side healthy: the failure budget resets (requirement 4). */
  succeeded(reason: string): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.probeTimer);
    this.failures = 0;
    this.everReady = true;
    this.transition('ready', reason);
  }

  failed(failure: FailureClass): void {
    if (!this.running) return;
    if (failure.permanent) return this.park(failure.reason);
    this.failures += 1;
    if (this.current === 'parked' || this.failures >= this.deps.config.connectAttempts) {
      return this.park(failure.reason);
    }
    this.transition(this.everReady ? 'degraded' : 'connecting', failure.reason);
    this.deps.metrics.onReconnect?.(this.deps.config.name, 'connect_failed');
    this.retryLater(this.deps.backoff.delayMs(this.failures, failure.retryAfterMs));
  }

  /** A ready side broke: reconnect at once the first time, then with backoff. */
  lost(reason: string, kind: string): void {
    if (!this.running) return;
    this.deps.metrics.onReconnect?.(this.deps.config.name, kind);
    this.failures += 1;
    this.transition('degraded', reason);
    // The first reconnect at once: on the next turn, so a side that finds its loss inside an
    // attempt (the 2026 side's re-ask) gets a new attempt rather than the one ending.
    this.retryLater(this.failures === 1 ? 0 : this.deps.backoff.delayMs(this.failures - 1));
  }

  /** New work revives a parked side with an immediate probe, at most every 5 s. */
  probeForWork(): void {
    if (this.current !== 'parked') return;
    const gap = Math.min(this.deps.config.parkedProbeMs, MAX_WORK_PROBE_GAP_MS);
    if (this.attempt || Date.now() - this.lastProbeAt < gap) return;
    this.lastProbeAt = Date.now();
    this.deps.metrics.onReconnect?.(this.deps.config.name, 'work');
    void this.runAttempt();
  }

  /**
   * Every change of state is a log line and a metric (requirement 13). A repeated identical
   * failure is silent, so a parked server's probes do not flood the log.
   */
  transition(to: SupervisorState, reason: string): void {
    const from = this.current;
    const sameReason = reason === this.why;
    this.why = reason;
    if (from === to && sameReason) return;
    const line = { server: this.deps.config.name, side: this.deps.side, from, to, reason };
    if (from === to) this.deps.logger.info(line, 'upstream still ' + to);
    else if (to === 'parked' || to === 'degraded') this.deps.logger.warn(line, 'upstream state');
    else this.deps.logger.info(line, 'upstream state');
    this.current = to;
    if (from !== to) this.deps.metrics.onState?.(this.deps.config.name, to);
    this.notify();
  }

  notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** Resolves once `done()` holds or after `timeoutMs`, whichever comes first. */
  waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.waiters.add(check);
    });
  }

  private park(reason: string): void {
    this.transition('parked', reason);
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.lastProbeAt = Date.now();
      this.deps.metrics.onReconnect?.(this.deps.config.name, 'probe');
      void this.runAttempt();
    }, this.deps.config.parkedProbeMs).unref();
  }

  private retryLater(delayMs: number): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.runAttempt(), delayMs).unref();
  }

  private clearTimers(): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.probeTimer);
    this.retryTimer = undefined;
    this.probeTimer = undefined;
  }
}
