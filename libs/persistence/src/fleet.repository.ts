import { LeaseLostError } from '@app/common';
import { TaskLease } from './claimed-task';
import { Queryable } from './database';
import {
  BACKLOG_SAMPLE_SQL,
  DELETE_EXPIRED_BATCH_SQL,
  EARLIEST_FUTURE_DUE_SQL,
  RENEW_WATCHING_CANCEL_SQL,
} from './sql/fleet.sql';
import { CLEAR_LEASE, afterMsUnlessCancelled, fencedUpdateSql } from './sql/fenced-write.sql';

/** One row of the backlog sample (numbers arrive as strings from pg's bigint/numeric). */
export interface BacklogSampleRow {
  phase: string;
  backlog: string | number;
  oldest_due_age_seconds: string | number | null;
}

/** What a held call's renewal found: still ours, and whether a cancel was requested meanwhile. */
export type RenewalOutcome = 'renewed' | 'cancel_requested';

/**
 * The poller fleet's statements beyond {@link TaskLeaseRepository}: wake-up timing, the renewal that watches for cancels, graceful give-backs,
 * backlog sampling and retention. Every write about a claimed row is fenced like the others.
 */
export class FleetRepository {
  constructor(private readonly db: Queryable) {}

  /** Milliseconds until the earliest future due time (database clock), or null when none. */
  async earliestFutureDueMs(): Promise<number | null> {
    const rows = await this.db.query<{ due_in_ms: string | number | null }>(
      EARLIEST_FUTURE_DUE_SQL,
      [],
      'mcp_tasks_earliest_due',
    );
    const value = rows[0]?.due_in_ms;
    return value === null || value === undefined ? null : Math.max(0, Number(value));
  }

  /**
   * Renews a held call's lease and reports a pending cancel request in the same statement, so a
   * sync-call worker learns of a cancel within lease/3 even if the NOTIFY was lost.
   * Throws {@link LeaseLostError} when the lease is gone.
   */
  async renewWatchingCancel(lease: TaskLease, leaseMs: number): Promise<RenewalOutcome> {
    const rows = await this.db.query<{ cancel_requested: boolean }>(RENEW_WATCHING_CANCEL_SQL, [
      lease.taskId,
      lease.token,
      leaseMs,
    ]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
    return rows[0].cancel_requested ? 'cancel_requested' : 'renewed';
  }

  /**
   * Gives a claimed row back, due after `delayMs`, without counting an error: a row claimed for
   * a server that filled up meanwhile. Throws {@link LeaseLostError} when the lease is gone.
   */
  async releaseAfter(lease: TaskLease, delayMs: number): Promise<void> {
    await this.mustApply(
      lease,
      fencedUpdateSql(`${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(3)}`),
      [delayMs],
    );
  }

  /**
   * A submit that provably never left this worker (nothing was sent): counts the error like
   * `releaseAfterError` and also clears `submit_started_at`, so the next attempt is not mistaken
   * for a crash mid-submit (which would end the task `outcome_uncertain`).
   */
  async releaseUnsentSubmit(lease: TaskLease, lastError: string, delayMs: number): Promise<void> {
    await this.mustApply(
      lease,
      fencedUpdateSql(
        `submit_started_at = NULL, consecutive_errors = consecutive_errors + 1, last_error = $3,
         ${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(4)}`,
      ),
      [lastError, delayMs],
    );
  }

  /** Wakes every poller (rows released by a draining worker are due now). */
  async notifyDue(reason: string): Promise<void> {
    await this.db.query(`SELECT pg_notify('mcp_tasks_due', $1)`, [reason]);
  }

  async sampleBacklog(): Promise<BacklogSampleRow[]> {
    return this.db.query<BacklogSampleRow>(BACKLOG_SAMPLE_SQL, [], 'mcp_tasks_backlog_sample');
  }

  /** Deletes one batch of terminal rows older than `days`; returns how many went. */
  async deleteExpiredBatch(days: number, batchSize: number): Promise<number> {
    const rows = await this.db.query(DELETE_EXPIRED_BATCH_SQL, [days, batchSize]);
    return rows.length;
  }

  private async mustApply(lease: TaskLease, sql: string, params: unknown[]): Promise<void> {
    const rows = await this.db.query(sql, [lease.taskId, lease.token, ...params]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
  }
}
