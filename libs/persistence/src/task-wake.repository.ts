import { Queryable } from './database';
import { PULL_IN_TASKS_SQL, WAKE_TASKS_SQL } from './sql/push-wake.sql';
import { TASKS_DUE_CHANNEL } from './channels';

/**
 * The poller's writes for upstreams that push (docs/leases.md, "Pushed changes"): wake tasks an
 * upstream said changed, and bring tasks back to the normal poll interval when the subscription
 * that covered them is lost. The database carries the wake to whichever poller claims next, so
 * a notification heard by one poller reaches a task another one polls.
 */
export class TaskWakeRepository {
  constructor(private readonly db: Queryable) {}

  /** Wakes these tasks; NOTIFYs the fleet when one became due. Returns how many did. */
  async wake(taskIds: readonly string[]): Promise<number> {
    if (taskIds.length === 0) return 0;
    const rows = await this.db.query<{ due: string | number }>(
      WAKE_TASKS_SQL,
      [taskIds],
      'mcp_tasks_push_wake',
    );
    const due = Number(rows[0]?.due ?? 0);
    if (due > 0) await this.db.query(`SELECT pg_notify($1, 'push')`, [TASKS_DUE_CHANNEL]);
    return due;
  }

  /** These tasks are due within `intervalMs` again (their subscription was lost). */
  async pullIn(taskIds: readonly string[], intervalMs: number): Promise<void> {
    if (taskIds.length === 0) return;
    await this.db.query(PULL_IN_TASKS_SQL, [taskIds, intervalMs], 'mcp_tasks_push_pull_in');
  }
}
