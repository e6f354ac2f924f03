/**
 * The poller fleet's statements that guard no lease (FleetRepository). Each is one short
 * statement on the claim index or the retention index; none holds a lock longer than its own
 * execution.
 */

/**
 * Milliseconds from the database's now until the earliest due time later than $1 ms ago, when
 * the caller's last claim statement began (negative when it has passed; the caller wakes at
 * once). Rows due before that are not counted: that claim left them (someone else holds them, or
 * their servers are saturated), and waking for them would spin. A row that fell due while the
 * claim ran is counted: the claim did not see it, and without this it would wait for the
 * fallback interval. The bound is a duration on the database's own clock, so no worker's clock
 * enters it. One index probe on tasks_due_idx.
 */
export const EARLIEST_DUE_SINCE_SQL = `
SELECT extract(epoch FROM min(next_attempt_at) - now()) * 1000 AS due_in_ms
  FROM tasks
 WHERE next_attempt_at IS NOT NULL
   AND next_attempt_at > now() - make_interval(secs => $1::int / 1000.0)`;

/**
 * Backlog gauges: due rows per phase and the age of the oldest. Bounded by a LIMIT so a huge
 * backlog costs at most 100,000 index entries per sample per table (the gauge then reads
 * 100,000: the alert fires long before that).
 *
 * The `deliver` phase reads `webhook_deliveries` and counts differently: every pending delivery
 * (due now or waiting for its next retry), aged from the event's creation. A retry is scheduled
 * in the future, so "due now" would stay near 0 for a receiver that has been down for hours;
 * the age of the oldest undelivered event is what a subscriber feels (operations.md).
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
 GROUP BY phase
UNION ALL
SELECT 'deliver', count(*), extract(epoch FROM now() - min(created_at))
  FROM (SELECT created_at
          FROM webhook_deliveries
         WHERE next_attempt_at IS NOT NULL
         LIMIT 100000) pending
HAVING count(*) > 0`;

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
