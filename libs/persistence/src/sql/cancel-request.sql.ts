/**
 * The cancel request as one statement over the active tasks `where` selects (a condition on the
 * task alias it is given), answering each as `task_rows` shows it:
 * - the lease rows are locked first, as every writer of an active task takes them
 *   (fenced-write.sql.ts), in ID order so two cancels of one thread cannot deadlock;
 * - the task rows are written under those locks (an UPDATE reads each row's newest version, so a
 *   submit marked started just before is seen): a queued task whose submit has not started is
 *   cancelled at once, locally (its lease row goes with the `tasks_after_update` trigger, which
 *   voids any claim on it, so its submit can never start), and its claim count is kept;
 * - every other one gets the request on its lease row (the claim's cancel phase), due now unless
 *   a worker holds it: the holder sees the request when it writes.
 */
export function cancelSql(where: (alias: string) => string): string {
  const local = `tasks.status = 'queued' AND tasks.submit_started_at IS NULL`;
  return `
WITH lease AS (
  SELECT l.task_id, l.claim_count
    FROM task_leases l JOIN tasks t ON t.id = l.task_id
   WHERE ${where('t')}
   ORDER BY l.task_id
     FOR UPDATE OF l
),
cancelled AS (
  UPDATE tasks
     SET cancel_requested_at = coalesce(tasks.cancel_requested_at, now()),
         status = CASE WHEN ${local} THEN 'cancelled' ELSE tasks.status END,
         completed_at = CASE WHEN ${local} THEN now() ELSE tasks.completed_at END,
         claim_count = CASE WHEN ${local} THEN lease.claim_count ELSE tasks.claim_count END
    FROM lease
   WHERE tasks.id = lease.task_id AND ${where('tasks')}
  RETURNING tasks.*
),
requested AS (
  UPDATE task_leases l
     SET cancel_requested = true,
         next_attempt_at = CASE WHEN l.lease_token IS NULL OR l.lease_expires_at <= now()
                                THEN now() ELSE l.next_attempt_at END
    FROM cancelled c
   WHERE l.task_id = c.id AND c.status <> 'cancelled'
  RETURNING l.task_id, l.next_attempt_at, l.lease_owner, l.lease_expires_at
)
SELECT c.*, r.next_attempt_at, r.lease_owner, r.lease_expires_at
  FROM cancelled c LEFT JOIN requested r ON r.task_id = c.id`;
}
