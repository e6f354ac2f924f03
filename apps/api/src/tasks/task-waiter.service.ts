import { Injectable } from '@nestjs/common';
import { setTimeout as delay } from 'node:timers/promises';
import { TaskStatus } from '@app/common';
import { TaskRepository, TaskRow } from '@app/persistence';
import { HeldRequests } from '../health/held-requests';

/** First re-read after this; then each gap grows by half, up to the cap. */
const FIRST_CHECK_MS = 20;
/** The most a waiting caller can be late after the task leaves `queued`. */
const MAX_CHECK_MS = 200;

/**
 * Holds a submit (`Prefer: wait=N`) until its task leaves `queued` or N seconds pass. It
 * re-reads the row on a short, growing interval: a waiter costs one indexed primary-key read
 * per check, and the API needs no LISTEN connection per replica. The status change itself comes
 * from a poller, through the database. When the API closes, the hold ends at once and answers
 * the task as last read (the wait is a preference; {@link HeldRequests}).
 */
@Injectable()
export class TaskWaiter {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly held: HeldRequests,
  ) {}

  /**
   * The task as last read: no longer queued, or still queued at the deadline, when the caller
   * went away (signalled by `abort`) or when the app closes.
   */
  waitWhileQueued(task: TaskRow, seconds: number, abort?: AbortSignal): Promise<TaskRow> {
    return this.held.hold(abort, (stop) => this.poll(task, seconds, stop));
  }

  private async poll(task: TaskRow, seconds: number, stop: AbortSignal): Promise<TaskRow> {
    const deadline = Date.now() + seconds * 1000;
    let current = task;
    let gap = FIRST_CHECK_MS;
    while (current.status === TaskStatus.Queued) {
      const left = deadline - Date.now();
      if (left <= 0 || stop.aborted) break;
      try {
        await delay(Math.min(gap, left), undefined, { signal: stop });
      } catch {
        break; // the client is gone, or the app is closing
      }
      gap = Math.min(MAX_CHECK_MS, Math.ceil(gap * 1.5));
      const fresh = await this.tasks.findForUser(task.userId, task.id, task.threadId);
      if (!fresh) break; // the thread was deleted meanwhile: answer with what was created
      current = fresh;
    }
    return current;
  }
}
