import { CLEAR_LEASE } from './fenced-write.sql';

/**
 * Ends many claimed rows in one terminal status with ONE statement, still fenced row by row:
 * each row lands only if its own token is current and its lease unexpired (database clock).
 * A row missing from RETURNING lost its lease; the caller discards it and never retries.
 *
 * Why: one commit per row caps the lease engine near Postgres' write-transaction rate (about
 * 2,400 tx/s with pgbench -N on the reference machine, docs/benchmarks.md), far below
 * graphile-worker's batched mode (about 16,800 jobs/s). One `UPDATE … FROM unnest(…)` per
 * batch pays the commit (WAL flush) once per batch instead of once per row.
 *
 * `$1` task IDs and `$2` lease tokens, index-aligned; `$3…$12` as in `finish` (one snapshot for
 * the whole batch: the no-op burn-down and any caller that ends a set of rows the same way).
 */
export const FINISH_MANY_SQL = `
UPDATE tasks t
   SET status = $3,
       result = CASE WHEN $4::boolean THEN $5::jsonb ELSE t.result END,
       result_preview = CASE WHEN $4::boolean THEN $6 ELSE t.result_preview END,
       result_truncated = CASE WHEN $4::boolean THEN $7 ELSE t.result_truncated END,
       result_artifact = coalesce($8::jsonb, t.result_artifact),
       progress = CASE WHEN $9::boolean THEN $10::jsonb ELSE t.progress END,
       input_required = NULL, error_code = $11, error_message = $12,
       poll_count = t.poll_count + 1, ${CLEAR_LEASE}, next_attempt_at = NULL, completed_at = now()
  FROM unnest($1::text[], $2::uuid[]) AS u(id, token)
 WHERE t.id = u.id
   AND t.lease_token = u.token
   AND t.lease_expires_at > now()
RETURNING t.id`;
