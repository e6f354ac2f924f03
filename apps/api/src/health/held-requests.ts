import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import type { TaskRow } from '@app/persistence';

/** One hold: what it waits for, how it re-reads its task, and until when. */
export interface Hold {
  /** The task as the hold starts. */
  task: TaskRow;
  /** Whether the hold goes on for the task as last read. */
  waiting: (row: TaskRow) => boolean;
  /** Reads the task again; null when it is gone (the hold then answers what it had). */
  read: () => Promise<TaskRow | null>;
  /** When the hold ends at the latest (`Date.now()` milliseconds). */
  deadline: number;
  /** The first re-read comes after this; each gap then grows by half, up to `maxCheckMs`. */
  firstCheckMs: number;
  maxCheckMs: number;
  /** Fires when the caller went away. */
  abort?: AbortSignal;
}

/**
 * The requests this replica holds open while a task moves (a `Prefer: wait` submit, an MCP call
 * answered inline, `tasks/result`, a round's wait). A hold re-reads its task on a short, growing
 * interval: one primary-key read per check, and no LISTEN connection per replica (the change
 * itself comes from a poller, through the database). When the app closes every hold ends at once
 * and answers the task as last read, so no hold keeps the process, or its client, waiting past
 * the shutdown delay (docs/operations.md, "Grace periods"). Ending a hold this way is not the
 * client's cancel: the task goes on.
 */
@Injectable()
export class HeldRequests implements OnModuleDestroy {
  /** One per hold in progress. */
  private readonly holds = new Set<AbortController>();
  private closed = false;

  /** True once the app is closing: a hold that ends now ended for that reason, or its client's. */
  get closing(): boolean {
    return this.closed;
  }

  /**
   * Holds until the task as last read is no longer `waiting`, the deadline passes, the caller
   * goes away or the app closes (a hold that starts while it closes does not wait); answers the
   * task as last read.
   */
  async hold(hold: Hold): Promise<TaskRow> {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort();
    hold.abort?.addEventListener('abort', onAbort, { once: true });
    this.holds.add(stop);
    if (this.closed || hold.abort?.aborted) stop.abort();
    try {
      return await reread(hold, stop.signal);
    } finally {
      this.holds.delete(stop);
      hold.abort?.removeEventListener('abort', onAbort);
    }
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const stop of this.holds) stop.abort();
  }
}

async function reread(hold: Hold, stop: AbortSignal): Promise<TaskRow> {
  let current = hold.task;
  let gap = hold.firstCheckMs;
  while (hold.waiting(current)) {
    const left = hold.deadline - Date.now();
    if (left <= 0 || stop.aborted) break;
    try {
      await delay(Math.min(gap, left), undefined, { signal: stop });
    } catch {
      break; // the caller is gone, or the app is closing
    }
    gap = Math.min(hold.maxCheckMs, Math.ceil(gap * 1.5));
    const fresh = await hold.read();
    if (!fresh) break;
    current = fresh;
  }
  return current;
}
