/**
 * Every write about a claimed row goes through this shape: it lands only while the claim's
 * token is current and its lease unexpired, judged by the database clock. Zero rows means the
 * lease was lost; the caller discards its result and never retries the write.
 *
 * `$1` is the task ID and `$2` the lease token; callers number their own parameters from $3.
 * `guard` adds a condition (for example "no cancel request") whose failure is told apart from
 * a lost lease by a second, cheap fenced statement.
 */
export function fencedUpdateSql(set: string, guard = ''): string {
  return `UPDATE tasks SET ${set}
   WHERE id = $1 AND lease_token = $2 AND lease_expires_at > now()${guard ? ` AND ${guard}` : ''}
  RETURNING id`;
}

/** Clears the lease: the row is released to whoever claims it at its due time. */
export const CLEAR_LEASE = 'lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL';

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
