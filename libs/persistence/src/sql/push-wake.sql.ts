/**
 * The statements of push (docs/leases.md, "Pushed changes"): an upstream told a poller that
 * tasks changed, or a poller lost the subscription that would have told it. Neither holds a
 * lease nor is fenced: like a consumer's answer (task-input.repository.ts) they only move a due
 * time or raise a flag that the lease holder's own fenced write reads. Several lease rows are
 * locked in task ID order (docs/leases.md, "The lease table"); a row a claim holds is waited
 * for, briefly, rather than skipped, since a skipped wake would be a lost one.
 */

/**
 * Wakes tasks: one without a lease is due now (its next claim polls it); one under a lease gets
 * `answers_waiting`, so the holder's poll write makes it due at once instead of after its
 * interval (the holder may have read the upstream before the change). `$1` task IDs. Returns
 * how many rows without a lease became due (not the leased rows marked), to NOTIFY the fleet
 * only when something did.
 */
export const WAKE_TASKS_SQL = `
WITH locked AS (
  SELECT task_id FROM task_leases
   WHERE task_id = ANY($1::text[])
   ORDER BY task_id
     FOR UPDATE
), woken AS (
  UPDATE task_leases l
     SET next_attempt_at = CASE WHEN l.lease_token IS NULL THEN now() ELSE l.next_attempt_at END,
         answers_waiting = l.answers_waiting OR l.lease_token IS NOT NULL
    FROM locked
   WHERE l.task_id = locked.task_id
     AND (l.lease_token IS NOT NULL OR l.next_attempt_at > now())
  RETURNING l.lease_token IS NULL AS due
)
SELECT count(*) FILTER (WHERE due) AS due FROM woken`;

/**
 * A subscription was lost: tasks it covered, scheduled for the slow safety poll, are due within
 * the normal interval again. `$1` task IDs, `$2` the normal interval in ms (each row gets ±10 %
 * so they do not fall due together). Rows under a lease are left to their holder's write.
 */
export const PULL_IN_TASKS_SQL = `
WITH locked AS (
  SELECT task_id FROM task_leases
   WHERE task_id = ANY($1::text[])
     AND lease_token IS NULL
     AND next_attempt_at > now() + make_interval(secs => $2::float8 / 1000)
   ORDER BY task_id
     FOR UPDATE
)
UPDATE task_leases l
   SET next_attempt_at = now() + make_interval(secs => $2::float8 * (0.9 + 0.2 * random()) / 1000)
  FROM locked
 WHERE l.task_id = locked.task_id AND l.lease_token IS NULL`;
