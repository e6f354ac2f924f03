/**
 * When a demo task changes by itself. Demo tasks keep no timers of their own (their state is
 * computed from a timeline at each read), so a server that pushes needs to know the instants at
 * which a task's status moves: one timer per watched task, set to its next change, re-armed
 * after each. A change from outside (an answer, a cancel) is reported with {@link touch}.
 */
export class TaskChangeTimers {
  private readonly watched = new Map<
    string,
    { timer?: NodeJS.Timeout; next: (now: number) => number | undefined; changed: () => void }
  >();

  constructor(private readonly clock: () => number = Date.now) {}

  /**
   * Watches a task: `next(now)` says when it next changes by itself (a time after `now`, or
   * undefined when only an outside act can change it); `changed` runs at each change.
   */
  watch(key: string, next: (now: number) => number | undefined, changed: () => void): void {
    this.forget(key);
    this.watched.set(key, { next, changed });
    this.arm(key);
  }

  /** The task changed from outside: report it now and re-arm for its next change. */
  touch(key: string): void {
    const entry = this.watched.get(key);
    if (!entry) return;
    entry.changed();
    this.arm(key);
  }

  forget(key: string): void {
    clearTimeout(this.watched.get(key)?.timer);
    this.watched.delete(key);
  }

  close(): void {
    for (const key of [...this.watched.keys()]) this.forget(key);
  }

  private arm(key: string): void {
    const entry = this.watched.get(key);
    if (!entry) return;
    clearTimeout(entry.timer);
    const now = this.clock();
    const at = entry.next(now);
    if (at === undefined) {
      entry.timer = undefined;
      return;
    }
    // A timer may fire a millisecond early: the phase at `at` is read only once `at` has come.
    entry.timer = setTimeout(
      () => {
        if (this.clock() < at) return this.arm(key);
        entry.changed();
        this.arm(key);
      },
      Math.max(0, at - now),
    );
    entry.timer.unref();
  }
}

/** The first of `times` after `now`. */
export function firstAfter(now: number, times: Array<number | undefined>): number | undefined {
  let first: number | undefined;
  for (const time of times) {
    if (time !== undefined && time > now && (first === undefined || time < first)) first = time;
  }
  return first;
}
