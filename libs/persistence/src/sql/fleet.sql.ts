/**
 * The poller fleet's extra statements (issue 5). Each is one short statement on the claim
 * index or the retention index; none holds a lock longer than its own execution.
 */

/**
 * The claim of claim.sql.ts with one more filter: `$6` lists servers whose per-worker
 * `maxConcurrentCalls` is used up on the claiming worker. Excluding them in the claim (instead of
 * claiming and giving rows back) means a hung server's due rows stay untouched for the workers
 * that still have room for it, and cost this worker nothing: a hung server fills only its own
 * slots (leases.md, invariant 7). Same shape, same index and same comments as CLAIM_SQL otherwise.
 */
export const CLAIM_EXCLUDING_SERVERS_SQL = `
WITH due AS (
  SELECT t.id,
         t.next_attempt_at AS due_at,
         (t.lease_token IS NOT NULL) AS rescued,
         CASE
           WHEN t.cancel_requested_at IS NOT NULL THEN 'cancel'
           WHEN t.status = 'queued' THEN 'submit'
           ELSE 'poll'
         END AS phase
    FROM tasks t
   WHERE t.next_attempt_at IS NOT NULL
     AND t.next_attempt_at <= now()
     AND NOT (t.server = ANY($6::text[]))
     AND (CASE
            WHEN t.cancel_requested_at IS NOT NULL THEN 'cancel'
            WHEN t.status = 'queued' THEN 'submit'
            ELSE 'poll'
          END) = ANY($3::text[])
     AND (t.pinned_worker_id IS NULL
          OR t.pinned_worker_id = $1
          OR NOT EXISTS (SELECT 1 FROM workers w
                          WHERE w.id = t.pinned_worker_id
                            AND w.stopped_at IS NULL
                            AND w.heartbeat_at > now() - make_interval(secs => $5::float8 / 1000)))
   ORDER BY t.next_attempt_at
   LIMIT $2
   FOR UPDATE OF t SKIP LOCKED
)
UPDATE tasks t
   SET lease_owner      = $1,
       lease_token      = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => $4::float8 / 1000),
       next_attempt_at  = now() + make_interval(secs => $4::float8 / 1000),
       claim_count      = t.claim_count + 1
  FROM due
 WHERE t.id = due.id
RETURNING t.*, due.phase, due.due_at, due.rescued,
          extract(epoch FROM now() - due.due_at) AS due_lag_seconds,
          now() AS db_now`;

/**
 * Milliseconds from the database's now until the earliest due time still in the future (rows
 * due already are either being claimed by someone else or belong to saturated servers; waking
 * for them would spin). One index probe on tasks_due_idx.
 */
export const EARLIEST_FUTURE_DUE_SQL = `
SELECT extract(epoch FROM min(next_attempt_at) - now()) * 1000 AS due_in_ms
  FROM tasks
 WHERE next_attempt_at IS NOT NULL AND next_attempt_at > now()`;

/**
 * Backlog gauges: due rows per phase and the age of the oldest. Bounded by a LIMIT so a huge
 * backlog costs at most 100,000 index entries per sample (the gauge then reads 100,000: the
 * alert fires long before that).
 */
export const BACKLOG_SAMPLE_SQL = `
SELECT phase, count(*) AS backlog,
       extract(epoch FROM now() - min(next_attempt_at)) AS oldest_due_age_seconds
  FROM (SELECT CASE
                 WHEN cancel_requested_at IS NOT NULL THEN 'cancel'
                 WHEN status = 'queued' THEN 'submit'
                 ELSE 'poll'
               END AS phase,
               next_attempt_at
          FROM tasks
         WHERE next_attempt_at IS NOT NULL AND next_attempt_at <= now()
         ORDER BY next_attempt_at
         LIMIT 100000) due
 GROUP BY phase`;

/**
 * Retention: deletes at most $2 terminal rows completed more than $1 days ago, oldest first.
 * SKIP LOCKED and the small batch keep each statement to milliseconds, so it never blocks the
 * claim or an API read; several pollers running it at once simply share the work.
 */
export const DELETE_EXPIRED_BATCH_SQL = `
DELETE FROM tasks
 WHERE id IN (SELECT id FROM tasks
               WHERE completed_at IS NOT NULL
                 AND next_attempt_at IS NULL
                 AND completed_at < now() - make_interval(days => $1::int)
               ORDER BY completed_at
               LIMIT $2
               FOR UPDATE SKIP LOCKED)
RETURNING id`;

/**
 * A held call's renewal (every lease/3), fenced like every write, returning whether a cancel was
 * requested: the worker then aborts the call and ends the task `cancelled`.
 */
export const RENEW_WATCHING_CANCEL_SQL = `
UPDATE tasks
   SET lease_expires_at = now() + make_interval(secs => $3::float8 / 1000),
       next_attempt_at  = now() + make_interval(secs => $3::float8 / 1000)
 WHERE id = $1 AND lease_token = $2 AND lease_expires_at > now()
RETURNING (cancel_requested_at IS NOT NULL) AS cancel_requested`;
