/**
 * The claim loop's alarm clock. `dueMaybe` says whether a claim could find work; it is set by
 * NOTIFY, by a timer reaching a known due time, by the fallback interval, and by a freed slot
 * when the last claim left rows behind. A due time learnt from a finished item (its next poll)
 * shortens the current sleep, so a worker polling its own tasks never waits for the fallback.
 * Local timers only decide when to *ask*; every due time itself comes from the database clock.
 */
export class WakeSignal {
  dueMaybe = true;
  private resolveWait?: () => void;
  private timer?: NodeJS.Timeout;
  /** Local epoch ms of the soonest due time learnt from finished items. */
  private soonest = Infinity;
  private sleepingUntil = Infinity;

  /** Wakes the loop now; `due` marks that a claim may find work. */
  fire(due: boolean): void {
    if (due) this.dueMaybe = true;
    this.resolve();
  }

  /**
   * An item settled and freed its slot. If the last claim may have left rows due, claim again
   * at once; else remember when the settled row is due next.
   */
  slotFreed(starved: boolean, nextDueInMs: number | undefined): void {
    if (starved || nextDueInMs === 0) {
      this.fire(true);
      return;
    }
    if (nextDueInMs === undefined) return;
    const at = Date.now() + nextDueInMs;
    if (at >= this.soonest) return;
    this.soonest = at;
    if (at < this.sleepingUntil && this.resolveWait) this.arm(at - Date.now());
  }

  /** Sleeps up to `ms` (or until the soonest learnt due time); a timeout marks work as maybe due. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolveWait = resolve;
      this.arm(Math.min(ms, this.soonest - Date.now()));
    });
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    const delay = Math.max(0, ms);
    this.sleepingUntil = Date.now() + delay;
    this.timer = setTimeout(() => {
      if (Date.now() >= this.soonest) this.soonest = Infinity;
      this.fire(true);
    }, delay);
  }

  private resolve(): void {
    clearTimeout(this.timer);
    this.sleepingUntil = Infinity;
    const resolve = this.resolveWait;
    this.resolveWait = undefined;
    resolve?.();
  }
}
