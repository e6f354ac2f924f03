/**
 * A candidate replacement for CLAIM_SQL, same semantics and parameters, measured in
 * docs/benchmarks.md (lease-engine). Only the pinned-worker test changes shape:
 *
 *   NOT EXISTS (SELECT 1 FROM workers w WHERE w.id = t.pinned_worker_id AND <alive>)
 * becomes
 *   t.pinned_worker_id <> ALL (ARRAY(SELECT w.id FROM workers w WHERE <alive>))
 *
 * Why: the planner charges the correlated NOT EXISTS once per candidate row (an index probe,
 * about 8 cost units) even though `pinned_worker_id IS NULL` short-circuits it at run time. With a
 * backlog of 20,000 due rows the claim's estimated cost reached about 164,000, above
 * `jit_above_cost` (100,000), so every claim paid about 97 ms of JIT compilation (EXPLAIN
 * ANALYZE: execution 243 ms for 500 rows, 97 ms of it JIT). The uncorrelated ARRAY(…) is an
 * InitPlan run once per statement; the estimate drops to about 1,300 and no JIT runs
 * (execution 61 ms for the same 500 rows). A worker whose heartbeat is stale is simply absent
 * from the array, so its pinned rows are claimable, as before; an empty array makes `<> ALL`
 * true, as NOT EXISTS was.
 */
export const CLAIM_UNCORRELATED_SQL = `
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
     AND (CASE
            WHEN t.cancel_requested_at IS NOT NULL THEN 'cancel'
            WHEN t.status = 'queued' THEN 'submit'
            ELSE 'poll'
          END) = ANY($3::text[])
     AND (t.pinned_worker_id IS NULL
          OR t.pinned_worker_id = $1
          OR t.pinned_worker_id <> ALL (ARRAY(
               SELECT w.id FROM workers w
                WHERE w.stopped_at IS NULL
                  AND w.heartbeat_at > now() - make_interval(secs => $5::float8 / 1000))))
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
