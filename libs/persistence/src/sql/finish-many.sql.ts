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
 * snapshot for the whole batch). The unnested relation has only `id` and `token`, so the SET
 * list's bare column names can only mean the task's.
 */
export const FINISH_MANY_SQL = `
UPDATE tasks
   SET ${TERMINAL_SET}
  FROM unnest($1::text[], $2::uuid[]) AS u(id, token)
 WHERE tasks.id = u.id
   AND tasks.lease_token = u.token
   AND ${LEASE_LIVE}
RETURNING tasks.id`;
