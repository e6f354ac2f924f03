import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { isTerminalStatus, jobNextChange } from '../job-timeline.util';
import type { JobRecord, JobRegistry } from '../job.registry';
import { TaskChangeTimers } from './task-change.timers';

/**
 * Push on the 2025-11-25 side: each native task's status changes are sent as
 * `notifications/tasks/status` (the `Task`) on the session that created it, unsolicited, as
 * SEP-1686 allows. Over Streamable HTTP they travel on the session's GET stream, which SDK
 * clients open after `initialize`; a session without one loses them (polling stays the baseline).
 */
export class TaskPush2025 {
  private readonly timers = new TaskChangeTimers();

  constructor(private readonly registry: JobRegistry) {}

  /** Watches a new task; `send` delivers one status notification on its session. */
  watch(
    job: JobRecord,
    read: () => Promise<Task | null>,
    send: (task: Task) => Promise<void>,
  ): void {
    const changed = (): void => {
      if (isTerminalStatus(this.registry.phase(job).status)) this.timers.forget(job.id);
      read()
        .then((task) => (task ? send(task) : undefined))
        // A closed session has nobody to tell: the client polls, as it would without push.
        .catch(() => undefined);
    };
    this.timers.watch(job.id, (now) => jobNextChange(job, now), changed);
  }

  /** A task was cancelled: tell its session now. */
  touched(taskId: string): void {
    this.timers.touch(taskId);
  }

  close(): void {
    this.timers.close();
  }
}
