import { TaskStatus } from '@app/common';
import { Queryable } from './database';
import { DEADLINE_SWEEP_SQL } from './sql/deadline-sweep.sql';

/** A task the deadline sweep reached: ended at once (`failed`), or due for the cancel phase. */
export interface OverdueTask {
  id: string;
  toolset: string;
  status: TaskStatus;
}

/** The tasks past their toolset's deadline (docs/contracts.md, "Deadlines"). */
export class TaskDeadlineRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Requests the cancel of up to `limit` overdue active tasks, with the deadline as its reason;
   * those never submitted end `failed` / `deadline_exceeded` in the same statement.
   */
  async requestOverdueCancels(limit: number): Promise<OverdueTask[]> {
    return this.db.query<OverdueTask & Record<string, unknown>>(
      DEADLINE_SWEEP_SQL,
      [limit],
      'deadline_sweep',
    );
  }
}
