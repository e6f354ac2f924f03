/**
 * The deadline sweep (docs/contracts.md, "Deadlines"): up to `$1` active tasks past their
 * `deadline_at` with no cancel request yet get one, with `cancel_reason = 'deadline'`. It is the
 * consumer's cancel request (task.repository.ts `cancelSql`) with a reason, so the same phases
 * carry it out:
 * - a task whose submit never started ends at once, locally (any claim on it is voided, so its
 *   submit can never start); the `tasks_deadline_end` trigger turns that `cancelled` into
 *   `failed` / `deadline_exceeded`;
 * - any other task is made due now for the cancel phase, which cancels the upstream work and
 *   ends it `cancelled`, turned likewise into `failed` / `deadline_exceeded`. A task a worker
 *   holds keeps its due time: the holder sees the request at its next write (or, for a held
 *   call, at its next lease renewal) and hands the row to the cancel phase.
 *
 * The lease row of an active task carries its deadline, and `task_leases_deadline_idx` holds
 * exactly the candidates, in deadline order, so an idle sweep is one empty index probe. The lease
 * rows are locked first, as every writer of an active task takes them (fenced-write.sql.ts);
 * `SKIP LOCKED`: pollers sweeping at once share the rows, and a row locked by a write in
 * progress is taken on the next sweep. A task ended here loses its lease row to the
 * `tasks_after_update` trigger (its claim count is kept on the task).
 */
export const DEADLINE_SWEEP_SQL = `
WITH overdue AS (
  SELECT task_id, claim_count FROM task_leases
   WHERE deadline_at <= now() AND NOT cancel_requested
   ORDER BY deadline_at
   LIMIT $1
   FOR UPDATE SKIP LOCKED
),
swept AS (
  UPDATE tasks t SET
         cancel_requested_at = now(),
         cancel_reason = 'deadline',
         status = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                       THEN 'cancelled' ELSE t.status END,
         completed_at = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                             THEN now() ELSE t.completed_at END,
         claim_count = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                            THEN overdue.claim_count ELSE t.claim_count END
    FROM overdue
   WHERE t.id = overdue.task_id
  RETURNING t.id, t.toolset, t.status
),
requested AS (
  UPDATE task_leases l
     SET cancel_requested = true,
         next_attempt_at = CASE WHEN l.lease_token IS NULL OR l.lease_expires_at <= now()
                                THEN now() ELSE l.next_attempt_at END
    FROM swept
   WHERE l.task_id = swept.id AND swept.status IN ('queued', 'working', 'input_required')
  RETURNING l.task_id
)
SELECT id, toolset, status FROM swept`;
