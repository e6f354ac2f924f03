import { Queryable } from './database';
import { TASKS_DUE_CHANNEL } from './channels';
import {
  BACKLOG_SAMPLE_SQL,
  DELETE_EXPIRED_BATCH_SQL,
  EARLIEST_DUE_SINCE_SQL,
} from './sql/fleet.sql';

/** One row of the backlog sample (numbers arrive as strings from pg's bigint/numeric). */
export interface BacklogSampleRow {
  phase: string;
  backlog: string | number;
  oldest_due_age_seconds: string | number | null;
}

/**
 * The poller fleet's statements that guard no lease: wake-up timing, the due NOTIFY, backlog
 * sampling and retention. None writes a leased row; those writes are `TaskLeaseRepository`'s
 * (leases.md, "Fencing").
 */
export class FleetRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Milliseconds until the earliest due time later than `sinceMs` ago (database clock; 0 when
   * that time has passed), or null when none.
   */
  async earliestDueMs(sinceMs: number): Promise<number | null> {
    const rows = await this.db.query<{ due_in_ms: string | number | null }>(
      EARLIEST_DUE_SINCE_SQL,
      [Math.max(0, Math.round(sinceMs))],
      'mcp_tasks_earliest_due',
    );
    const value = rows[0]?.due_in_ms;
    return value === null || value === undefined ? null : Math.max(0, Number(value));
  }

  /** Wakes every poller (rows released by a draining worker are due now). */
  async notifyDue(reason: string): Promise<void> {
    await this.db.query(`SELECT pg_notify($1, $2)`, [TASKS_DUE_CHANNEL, reason]);
  }

  async sampleBacklog(): Promise<BacklogSampleRow[]> {
    return this.db.query<BacklogSampleRow>(BACKLOG_SAMPLE_SQL, [], 'mcp_tasks_backlog_sample');
  }

  /** Deletes one batch of terminal rows older than `days`; returns how many went. */
  async deleteExpiredBatch(days: number, batchSize: number): Promise<number> {
    const rows = await this.db.query(DELETE_EXPIRED_BATCH_SQL, [days, batchSize]);
    return rows.length;
  }
}
