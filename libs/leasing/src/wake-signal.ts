/** Why a {@link WakeSignal.wait} ended. */
export type WakeReason = 'poked' | 'timeout';

/**
 * The one "sleep until poked or until a time" primitive of the poller: the claim engine's
 * sleep, its drain, and the lifecycle's wait for the database all use it.
 *
 * A poke that arrives while nobody waits is kept and ends the next wait at once, so a wake-up
 * sent between two waits (a NOTIFY during a claim statement) is never lost. {@link wakeAt}
 * shortens the current wait (and, if none runs, the next one) to end by a local time: a due
 * time learnt while sleeping cuts the sleep short. Local time only decides when to *ask* the
 * database; the due times themselves come from its clock (leases.md, "One clock").
 */
export class WakeSignal {
  private poked = false;
  private resolveWait?: (reason: WakeReason) => void;
  private timer?: NodeJS.Timeout;
  /** The current wait's end (local epoch ms), Infinity when none runs. */
  private endsAt = Infinity;
  /** A wake-up time learnt while no wait ran; the next wait ends by it. */
  private pendingAt = Infinity;

  constructor(private readonly now: () => number = Date.now) {}

  /** Ends the current wait now, or the next one at once if none runs. */
  poke(): void {
    this.poked = true;
    this.finish('poked');
  }

  /** Ends the current (or next) wait by local epoch ms `atMs`, if that is sooner. */
  wakeAt(atMs: number): void {
    if (!this.resolveWait) {
      this.pendingAt = Math.min(this.pendingAt, atMs);
      return;
    }
    if (atMs < this.endsAt) this.arm(atMs);
  }

  /**
   * Resolves `poked` at once if poked since the last wait ended, else at the next poke; or
   * `timeout` after `ms` (or at a time given to {@link wakeAt}, whichever is sooner). An
   * infinite `ms` waits for a poke only. One waiter at a time.
   */
  wait(ms: number): Promise<WakeReason> {
    if (this.poked) {
      this.poked = false;
      return Promise.resolve('poked');
    }
    const until = Math.min(this.now() + Math.max(0, ms), this.pendingAt);
    this.pendingAt = Infinity;
    return new Promise((resolve) => {
      this.resolveWait = resolve;
      this.arm(until);
    });
  }

  /** True while a wait is pending (for tests and the engine's bookkeeping). */
  get waiting(): boolean {
    return this.resolveWait !== undefined;
  }

  private arm(atMs: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.endsAt = atMs;
    if (!Number.isFinite(atMs)) return;
    this.timer = setTimeout(() => this.finish('timeout'), Math.max(0, atMs - this.now()));
  }

  private finish(reason: WakeReason): void {
    const resolve = this.resolveWait;
    if (!resolve) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.endsAt = Infinity;
    this.resolveWait = undefined;
    if (reason === 'poked') this.poked = false;
    resolve(reason);
  }
}
