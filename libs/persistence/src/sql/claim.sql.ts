/**
 * The claim: one statement picks the due rows in due order and leases them.
 *
 * - `LIMIT $2` is the caller's number of free slots: claim only what can start now.
 * - `FOR UPDATE SKIP LOCKED` lets concurrent claimers pass over each other's rows instead of
 *   queueing on them; the CTE locks, the UPDATE leases in the same statement.
 * - `next_attempt_at = now() + lease`: a lease that expires is simply due again, so this same
 *   statement is the recovery path and there is no sweeper.
 * - Every time comes from the database clock (`now()`), never a pod's.
 * - Rows pinned to a worker (stdio native tasks) go to that worker while it is alive, and to
 *   anyone once its heartbeat is older than the dead-after window ($5 ms). Not right after a
 *   Postgres restart: every heartbeat is stale then, and live workers' tasks would be ended
 *   `upstream_task_lost` (found by the chaos run); the window first has to pass once.
 * - The phase filter ($3) is evaluated on the rows the partial index yields; the CTE returns
 *   the previous due time and lease so the caller can record due lag and rescues.
 * - `$6` lists servers whose per-worker `maxConcurrentCalls` is used up on this worker. Skipping
 *   them here, instead of claiming and giving rows back, leaves a hung server's rows to workers
 *   with room for them: a hung server fills only its own slots (leases.md, invariant 7).
 * - `$7`/`$8` give each configured server's free room on this worker. The locked candidates are
 *   ranked per server and only the first `room` of each are leased; the others stay due, their
 *   row locks end with the statement. Without this bound a claim of 16 could take 16 rows of a
 *   server with 1 free slot and give 15 back (counted as started, due again 100 ms later). The
 *   window function cannot sit in the locking SELECT (Postgres forbids FOR UPDATE with window
 *   functions), hence the second CTE. A server absent from `$7` is bounded by `$2` alone.
 *
 * Measured (npm run bench, docs/benchmarks.md): a 50-row claim costs p99 17.7 ms with 1M rows in
 * the table and 19.3 ms with 10k (terminal rows are not in the index). With 20k rows due, JIT
 * compiled this statement for 97 of 243 ms; the apps' connections run with jit=off. Rewriting the
 * pinned-worker NOT EXISTS as `<> ALL (ARRAY(...))` cut the planner's estimate but not the
 * burn-down rate (3,640 vs 3,710 rows/s), so the plainer form stays.
 */
export const CLAIM_SQL = `
WITH candidates AS (
  SELECT t.id,
         t.server,
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
          OR (NOT EXISTS (SELECT 1 FROM workers w
                           WHERE w.id = t.pinned_worker_id
                             AND w.stopped_at IS NULL
                             AND w.heartbeat_at > now() - make_interval(secs => $5::float8 / 1000))
              AND pg_postmaster_start_time() < now() - make_interval(secs => $5::float8 / 1000)))
   ORDER BY t.next_attempt_at
   LIMIT $2
   FOR UPDATE OF t SKIP LOCKED
),
due AS (
  SELECT ranked.*
    FROM (SELECT c.*, row_number() OVER (PARTITION BY c.server ORDER BY c.due_at) AS nth
            FROM candidates c) ranked
    LEFT JOIN unnest($7::text[], $8::int[]) AS room(server, free) ON room.server = ranked.server
   WHERE ranked.nth <= coalesce(room.free, $2)
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
