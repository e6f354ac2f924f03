/**
 * The catalog sweep (docs/operations.md, "Removed toolsets"): a toolset is configured while a
 * worker not judged dead lists it in `workers.toolsets`; dead is the claim's rule
 * (worker-liveness.sql.ts, $2 the dead-after window in ms, on the database clock).
 *
 * - Only a sweeper that may judge changes anything (the same file): itself live a window into an
 *   unbroken run of heartbeats, a window after the server started; right after a restart or a
 *   failover every heartbeat is stale and every toolset would look removed.
 * - Only rows whose state changes are written, so a steady fleet writes nothing.
 */
import { mayJudge, notDead } from './worker-liveness.sql';

export const SWEEP_REMOVED_TOOLSETS_SQL = `
WITH live AS (
  SELECT coalesce(array_agg(DISTINCT name), '{}') AS names
    FROM workers w, unnest(w.toolsets) AS name
   WHERE ${notDead('w', '$2')}
)
UPDATE toolsets t
   SET removed_at = CASE WHEN t.name = ANY(live.names) THEN NULL ELSE now() END
  FROM live
 WHERE (t.removed_at IS NULL) = NOT (t.name = ANY(live.names))
   AND ${mayJudge('$1', '$2')}
RETURNING t.name, t.removed_at IS NOT NULL AS removed`;

/**
 * Queued tasks of a toolset removed for at least $1 ms end at once, $2 at a time. A row under a
 * live lease is left alone (its claimer is acting on it; the next sweep sees it again), and
 * SKIP LOCKED keeps the sweep off rows a claim is taking; the lease rows are locked first, as
 * every writer of an active task takes them (fenced-write.sql.ts), and go with the
 * `tasks_after_update` trigger once their tasks end. How each ends (`fate`):
 *
 * - a submit recorded as started (`submit_started_at`) with no handle stored may have reached
 *   the upstream: its worker stopped mid-submit, and no worker can take the toolset to find out.
 *   It ends `outcome_uncertain`, as the crash rules end such a submit (docs/contracts.md), never
 *   "removed before the task could be submitted", which would claim nothing was sent;
 * - a cancel requested before any submit ends the task `cancelled`, as the cancel phase would;
 * - any other queued task was never sent: `toolset_removed`.
 */
export const FAIL_QUEUED_OF_REMOVED_SQL = `
WITH doomed AS (
  SELECT l.task_id, l.claim_count,
         CASE WHEN t.submit_started_at IS NOT NULL THEN 'uncertain'
              WHEN t.cancel_requested_at IS NOT NULL THEN 'cancelled'
              ELSE 'removed' END AS fate,
         s.removed_at
    FROM task_leases l
    JOIN tasks t ON t.id = l.task_id
    JOIN toolsets s ON s.name = t.toolset
   WHERE s.removed_at <= now() - make_interval(secs => $1::float8 / 1000)
     AND l.queued
     AND (l.lease_expires_at IS NULL OR l.lease_expires_at <= now())
   LIMIT $2
   FOR UPDATE OF l SKIP LOCKED
)
UPDATE tasks t
   SET status = CASE WHEN doomed.fate = 'cancelled' THEN 'cancelled' ELSE 'failed' END,
       error_code = CASE doomed.fate WHEN 'uncertain' THEN 'outcome_uncertain'
                                     WHEN 'removed' THEN 'toolset_removed' END,
       error_message = CASE doomed.fate
         WHEN 'uncertain' THEN 'a submit was started (it may have reached the upstream) and no '
                               || 'task ID was recorded; then toolset "' || t.toolset || '" was '
                               || 'removed (in no live worker''s mcpServers config since '
                               || doomed.removed_at::text || '), so no worker can learn or '
                               || 'cancel what the upstream did'
         WHEN 'removed' THEN 'toolset "' || t.toolset || '" has been in no live worker''s '
                             || 'mcpServers config since ' || doomed.removed_at::text
                             || '; the task was still queued after REMOVED_TOOLSET_GRACE_MS' END,
       completed_at = now(),
       claim_count = doomed.claim_count
  FROM doomed
 WHERE t.id = doomed.task_id
RETURNING t.id`;
