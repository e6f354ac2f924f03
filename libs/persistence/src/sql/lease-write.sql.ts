/**
 * The fenced writes that are always sent row by row (fenced-write.sql.ts has the rule): a sync
 * call marked working, a held call's progress, the answer marks, and giving a claim back; and
 * the two re-reads after a write whose outcome is unknown. None is frequent enough to batch:
 * each happens at most a few times per attempt, off the burn-down's path.
 */
import { CLEAR_LEASE, LIVE_FENCE, delayUnlessCancelled, fencedWriteSql } from './fenced-write.sql';

/** Sync-call: the call is on the wire; the task is `working` while this worker holds it. */
export const MARK_WORKING_SQL = fencedWriteSql({
  lease: 'queued = false',
  task: `status = 'working', submitted_at = coalesce(tasks.submitted_at, now())`,
});

/** Stores progress of a held call without touching the schedule. */
export const UPDATE_PROGRESS_SQL = fencedWriteSql({ task: 'progress = $3::jsonb' });

/**
 * Sets `field` (an ISO time from the database clock) on the stored answers of the keys in `$3`,
 * or removes it; answers added meanwhile by the API are kept (the row is re-read under its lock).
 */
function answerMarkSql(field: 'sent_at' | 'delivered_at', remove = false): string {
  const value = remove
    ? `tasks.input_responses -> k - '${field}'`
    : `tasks.input_responses -> k || jsonb_build_object('${field}', now())`;
  return fencedWriteSql({
    task: `input_responses = tasks.input_responses || coalesce(
    (SELECT jsonb_object_agg(k, ${value}) FROM unnest($3::text[]) AS k
      WHERE tasks.input_responses ? k), '{}'::jsonb)`,
  });
}

/** The answer marks of `markAnswers`, by mark. */
export const ANSWER_MARK_SQL = {
  sent: answerMarkSql('sent_at'),
  unsent: answerMarkSql('sent_at', true),
  delivered: answerMarkSql('delivered_at'),
} as const;

/**
 * A transient error: count it, keep its text (`$3`), and come back after the backoff delay
 * (`$4` ms), or at once for the cancel phase when a cancel request is pending. With
 * `unsentSubmit` the submit provably never left this worker, so its mark is cleared too and the
 * next attempt is not taken for a crash mid-submit (which would end it `outcome_uncertain`).
 */
function releaseAfterErrorSql(unsentSubmit: boolean): string {
  return fencedWriteSql({
    lease: `${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(4)}`,
    task: `${unsentSubmit ? 'submit_started_at = NULL, ' : ''}consecutive_errors =
     tasks.consecutive_errors + 1, last_error = $3`,
  });
}

/** `releaseAfterError`. */
export const RELEASE_AFTER_ERROR_SQL = releaseAfterErrorSql(false);

/** `releaseUnsentSubmit`: also clears the submit's mark. */
export const RELEASE_UNSENT_SUBMIT_SQL = releaseAfterErrorSql(true);

/**
 * Gives a claimed row back, due after `$3` ms (or at once when a cancel is pending), without
 * counting an error: a row claimed for a server that filled up meanwhile.
 */
export const RELEASE_AFTER_SQL = fencedWriteSql({
  lease: `${CLEAR_LEASE}, next_attempt_at = ${afterMsUnlessCancelled(3)}`,
});

/**
 * Gives the row back, due now, without counting an error: a graceful shutdown, or a late poll
 * after a cancel request (the cancel phase takes it at once).
 */
export const RELEASE_NOW_SQL = fencedWriteSql({
  lease: `${CLEAR_LEASE}, next_attempt_at = now()`,
});

/** `now() + $n ms`, or now when a cancel request is pending (leases.md, "Cancellation"). */
function afterMsUnlessCancelled(param: number): string {
  return delayUnlessCancelled(`$${param}::float8`);
}

/**
 * Re-reads after a write whose outcome is unknown (docs/leases.md, "Ambiguous commits"): the
 * connection broke after the statement was sent, so it may have committed. Read under the same
 * fence, the submit-started mark tells whether it landed: it counts `submit_attempts` up, and
 * nothing but a fenced write of this claim can change the count while the claim holds the lease,
 * so a count above the one the claim read (`$3`) is this attempt's mark. No row: the lease is gone.
 */
export const SUBMIT_MARK_LANDED_SQL = `SELECT tasks.submit_attempts > $3 AS landed
  FROM task_leases JOIN tasks ON tasks.id = task_leases.task_id
 WHERE ${LIVE_FENCE}`;

/**
 * Whether the task row holds this remote handle (`$2` task ID, `$3` session, `$4` driver state):
 * the handle write clears the lease token, so a retry after a lost reply misses its fence, and
 * only the row itself can say that the first try landed. Not fenced: it decides whether upstream
 * work is cancelled as orphaned, whoever holds the row now.
 */
export const HANDLE_STORED_SQL = `SELECT 1 FROM tasks
 WHERE id = $1 AND remote_task_id = $2 AND remote_session_id IS NOT DISTINCT FROM $3
   AND driver_state IS NOT DISTINCT FROM $4::jsonb`;
