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
 * `tasks_deadline_idx` holds exactly the candidates, in deadline order, so an idle sweep is one
 * empty index probe. `SKIP LOCKED`: pollers sweeping at once share the rows, and a row locked
 * by a write in progress is taken on the next sweep.
 */
export const DEADLINE_SWEEP_SQL = `
WITH overdue AS (
  SELECT id FROM tasks
   WHERE deadline_at <= now() AND next_attempt_at IS NOT NULL AND cancel_requested_at IS NULL
   ORDER BY deadline_at
   LIMIT $1
   FOR UPDATE SKIP LOCKED
)
UPDATE tasks t SET
       cancel_requested_at = now(),
       cancel_reason = 'deadline',
       status = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                     THEN 'cancelled' ELSE t.status END,
       completed_at = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                           THEN now() ELSE t.completed_at END,
       lease_owner = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                          THEN NULL ELSE t.lease_owner END,
       lease_token = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                          THEN NULL ELSE t.lease_token END,
       lease_expires_at = CASE WHEN t.status = 'queued' AND t.submit_started_at IS NULL
                               THEN NULL ELSE t.lease_expires_at END,
       next_attempt_at = CASE
         WHEN t.status = 'queued' AND t.submit_started_at IS NULL THEN NULL
         WHEN t.lease_expires_at IS NULL OR t.lease_expires_at <= now() THEN now()
         ELSE t.next_attempt_at END
  FROM overdue
 WHERE t.id = overdue.id
RETURNING t.id, t.toolset, t.status`;
