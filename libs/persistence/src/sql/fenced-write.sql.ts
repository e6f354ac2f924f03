/**
 * The fencing rule of leases.md ("Fencing"), in the one place it is written: every write about a
 * claimed task row lands only while the claim's token is current and its lease unexpired, judged
 * by the database clock. Zero rows means the lease was lost; the caller discards its result and
 * never retries the write. `TaskLeaseRepository` is the only caller (pinned by
 * test/foundation/fenced-writes.test.ts).
 *
 * `$1` is the task ID and `$2` the lease token; callers number their own parameters from $3.
 * `guard` adds a condition (for example "no cancel request") whose failure is told apart from
 * a lost lease by a second, cheap fenced statement.
 */
export function fencedUpdateSql(set: string, guard = ''): string {
  return `UPDATE tasks SET ${set}
   WHERE id = $1 AND lease_token = $2 AND ${LEASE_LIVE}${guard ? ` AND ${guard}` : ''}
  RETURNING id`;
}

/** The lease half of the fence, shared by the row-by-row and the batched form. */
export const LEASE_LIVE = 'lease_expires_at > now()';

/** Clears the lease: the row is released to whoever claims it at its due time. */
export const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';

/**
 * A terminal write (leases.md, "Scheduling after an attempt": due time NULL, lease cleared,
 * `completed_at = now()`), one SET list for `finish` and `finishMany`. Parameters `$3…$12`:
 * status, has-result, result, preview, truncated, artifact, has-progress, progress, error code,
 * error message (`terminalParams` in task-lease.repository.ts builds them in this order).
 */
export const TERMINAL_SET = `status = $3,
       result = CASE WHEN $4::boolean THEN $5::jsonb ELSE result END,
       result_preview = CASE WHEN $4::boolean THEN $6 ELSE result_preview END,
       result_truncated = CASE WHEN $4::boolean THEN $7 ELSE result_truncated END,
       result_artifact = coalesce($8::jsonb, result_artifact),
       progress = CASE WHEN $9::boolean THEN $10::jsonb ELSE progress END,
       input_required = NULL, error_code = $11, error_message = $12,
       poll_count = poll_count + 1, ${CLEAR_LEASE}, next_attempt_at = NULL, completed_at = now()`;

/**
 * Sets `field` (an ISO time from the database clock) on the stored answers of the keys in `$3`,
 * or removes it; answers added meanwhile by the API are kept (the row is re-read under its lock).
 */
export function answerMarkSet(field: 'sent_at' | 'delivered_at', remove = false): string {
  const value = remove
    ? `input_responses -> k - '${field}'`
    : `input_responses -> k || jsonb_build_object('${field}', now())`;
  return `input_responses = input_responses || coalesce(
    (SELECT jsonb_object_agg(k, ${value}) FROM unnest($3::text[]) AS k
      WHERE input_responses ? k), '{}'::jsonb)`;
}

/** `now() + $n ms`, with the delay passed as a parameter. */
export function afterMs(param: number): string {
  return `now() + make_interval(secs => $${param}::float8 / 1000)`;
}

/**
 * `now() + $n ms`, or now when a cancel request is pending: a row given back with a delay (a
 * backoff, an overflow) must not make a cancel wait that delay out (leases.md, "Cancellation").
 */
export function afterMsUnlessCancelled(param: number): string {
  return `CASE WHEN cancel_requested_at IS NULL THEN ${afterMs(param)} ELSE now() END`;
}

/** Gives a leased row back to the cancel phase right away (a late poll after a cancel request). */
export const RELEASE_FOR_CANCEL_SQL = fencedUpdateSql(`${CLEAR_LEASE}, next_attempt_at = now()`);

/**
 * A held call's renewal (every lease/3; leases.md, "Timeouts"), fenced like every write,
 * returning whether a cancel was requested: the worker then aborts the call and ends the task
 * `cancelled`. The only write that moves `lease_expires_at` forward.
 */
export const RENEW_WATCHING_CANCEL_SQL = `
UPDATE tasks
   SET lease_expires_at = ${afterMs(3)},
       next_attempt_at  = ${afterMs(3)}
 WHERE id = $1 AND lease_token = $2 AND ${LEASE_LIVE}
RETURNING (cancel_requested_at IS NOT NULL) AS cancel_requested`;
