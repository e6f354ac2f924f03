import { LEASE_LIVE, TERMINAL_SET } from './fenced-write.sql';

/**
 * Ends many claimed rows in one terminal status with ONE statement, still fenced row by row
 * (leases.md, "Fencing"): each row lands only if its own token is current and its lease
 * unexpired (database clock). A row missing from RETURNING lost its lease; the caller discards
 * it and never retries.
 *
 * Why: one commit per row caps the lease engine near Postgres' write-transaction rate (about
 * 2,400 tx/s with pgbench -N on the reference machine, docs/benchmarks.md), far below
 * graphile-worker's batched mode (about 16,800 jobs/s). One `UPDATE … FROM unnest(…)` per
 * batch pays the commit (WAL flush) once per batch instead of once per row.
 *
 * `$1` task IDs and `$2` lease tokens, index-aligned; `$3…$12` the terminal SET list's (one
 * snapshot for the whole batch). The batch's lease rows are locked first in task ID order (`l`),
 * as every statement that locks several lease rows does (fenced-write.sql.ts says why); the fence
 * then deletes them (the tasks end), and the task rows are written from what it deleted, as
 * every terminal write does.
 */
export const FINISH_MANY_SQL = `
WITH l AS (
  SELECT b.id, b.token
    FROM task_leases
    JOIN unnest($1::text[], $2::uuid[]) AS b(id, token)
      ON task_leases.task_id = b.id
     AND task_leases.lease_token = b.token
     AND ${LEASE_LIVE}
   ORDER BY task_leases.task_id
     FOR UPDATE OF task_leases
),
u AS (
  DELETE FROM task_leases
   USING l AS b
   WHERE task_leases.task_id = b.id
     AND task_leases.lease_token = b.token
     AND ${LEASE_LIVE}
  RETURNING task_leases.task_id AS id, task_leases.claim_count
)
UPDATE tasks
   SET ${TERMINAL_SET}, claim_count = u.claim_count
  FROM u
 WHERE tasks.id = u.id
RETURNING tasks.id`;
