/**
 * The poller fleet's statements that guard no lease (FleetRepository). Each is one short
 * statement on the lease table's indexes or the retention index; none holds a lock longer than
 * its own execution.
 */

/**
 * Milliseconds from the database's now until the earliest due time later than $1 ms ago, when
 * the caller's last claim statement began (negative when it has passed; the caller wakes at
 * once). Rows due before that are not counted: that claim left them (someone else holds them, or
 * their servers are saturated), and waking for them would spin. A row that fell due while the
 * claim ran is counted: the claim did not see it, and without this it would wait for the
 * fallback interval. The bound is a duration on the database's own clock, so no worker's clock
 * enters it. A row without a lease is due at `next_attempt_at`, a leased one at its lease's end:
 * one probe of each partial index of `task_leases`.
 */
export const EARLIEST_DUE_SINCE_SQL = `
SELECT extract(epoch FROM least(
         (SELECT min(next_attempt_at) FROM task_leases
           WHERE lease_token IS NULL
             AND next_attempt_at > now() - make_interval(secs => $1::int / 1000.0)),
         (SELECT min(lease_expires_at) FROM task_leases
           WHERE lease_token IS NOT NULL
             AND lease_expires_at > now() - make_interval(secs => $1::int / 1000.0))
       ) - now()) * 1000 AS due_in_ms`;

/** The phase a due lease row is waiting for (claim.sql.ts decides it the same way). */
const DUE_PHASE = `CASE WHEN cancel_requested THEN 'cancel' WHEN queued THEN 'submit' ELSE 'poll' END`;

/**
 * Backlog gauges: due rows per phase and the age of the oldest, the rows without a lease that
 * are due and the leases that expired (rescues). Bounded by a LIMIT so a huge backlog costs at
 * most 100,000 index entries per index read (two of `task_leases`, one of
 * `webhook_deliveries`); past that a phase's gauge reads about 100,000 (up to twice that when
 * both reads find its rows), and the alert fires long before.
 *
 * The `deliver` phase reads `webhook_deliveries` and counts differently: every pending delivery
 * (due now or waiting for its next retry), aged from the event's creation. A retry is scheduled
 * in the future, so "due now" would stay near 0 for a receiver that has been down for hours;
 * the age of the oldest undelivered event is what a subscriber feels (operations.md). Past
 * 100,000 pending deliveries the oldest is taken among the 100,000 read, in no set order.
 */
export const BACKLOG_SAMPLE_SQL = `
SELECT phase, count(*) AS backlog,
       extract(epoch FROM now() - min(due_at)) AS oldest_due_age_seconds
  FROM ((SELECT ${DUE_PHASE} AS phase, next_attempt_at AS due_at
           FROM task_leases
          WHERE lease_token IS NULL AND next_attempt_at <= now()
          ORDER BY next_attempt_at
          LIMIT 100000)
        UNION ALL
        (SELECT ${DUE_PHASE}, lease_expires_at
           FROM task_leases
          WHERE lease_token IS NOT NULL AND lease_expires_at <= now()
          ORDER BY lease_expires_at
          LIMIT 100000)) due
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
 *
 * Read by `tasks_created_idx`: a task completed before the cutoff was created before it, and
 * `tasks` has no index on `completed_at`, which a task's end sets (an index on it would make
 * every end a non-HOT update: docs/leases.md, "The lease table"). The scan passes over the tasks
 * created before the cutoff that are still active or ended since, a few in practice.
 */
export const DELETE_EXPIRED_BATCH_SQL = `
DELETE FROM tasks
 WHERE id IN (SELECT id FROM tasks
               WHERE created_at < now() - make_interval(days => $1::int)
                 AND completed_at < now() - make_interval(days => $1::int)
               ORDER BY created_at
               LIMIT $2
               FOR UPDATE SKIP LOCKED)
RETURNING id`;
