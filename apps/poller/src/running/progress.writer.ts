import type { TaskProgress } from '@app/common';
import type { TaskLease, TaskLeaseRepository } from '@app/persistence';
import type { Logger } from 'pino';

/**
 * Stores a held call's progress without queueing a write per notification: one write at a time,
 * and only the newest value waits. An upstream sending hundreds of updates a second costs at
 * most one write per round trip.
 */
export class ProgressWriter {
  private pending?: TaskProgress;
  private writing?: Promise<void>;

  constructor(
    private readonly leases: Pick<TaskLeaseRepository, 'updateProgress'>,
    private readonly lease: TaskLease,
    private readonly log: Logger,
  ) {}

  push(progress: TaskProgress): void {
    this.pending = progress;
    this.writing ??= this.drain().finally(() => (this.writing = undefined));
  }

  /** Waits for the write in progress (and the newest pending value). */
  async flush(): Promise<void> {
    await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      const value = this.pending;
      this.pending = undefined;
      try {
        await this.leases.updateProgress(this.lease, value);
      } catch (error) {
        // Progress is advisory: a lost lease is found by the renewal, which aborts the call.
        this.log.debug({ err: error }, 'progress write failed');
        return;
      }
    }
  }
}
