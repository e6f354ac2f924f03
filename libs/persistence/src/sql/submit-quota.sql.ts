/**
 * The submit quota gate: the first statement of a quota-checked submit's transaction. It locks
 * the user's bucket row (creating it full on a first submit), refills it by the time since its
 * last refill, and takes one token, all in one round trip. `$1` user, `$2` default submits per
 * minute, `$3` default maximum active tasks; a `principal_quotas` row overrides either.
 *
 * Why this shape:
 * - The row lock serialises one user's checked submits across every API replica until the
 *   transaction ends, so the active count (in TASK_INSERT_SQL, a later statement with a
 *   fresh READ COMMITTED snapshot) sees every committed insert of that user: two replicas can
 *   never both pass the check at limit − 1. A single statement could not do that: all its CTEs
 *   share the snapshot taken before it waited on the lock.
 * - The token is taken unconditionally here; a refused submit rolls the transaction back, so a
 *   refusal spends nothing and leaves no row (nor event, nor outbox entry) behind.
 * - `ON CONFLICT DO UPDATE` makes the first submits of a new user race-free without a separate
 *   insert: a concurrent first insert waits and then takes the update path.
 * - The bucket uses the database's clock, the same for every replica: `clock_timestamp()`, not
 *   `now()` (the transaction's start), and never backwards. A transaction that began first may
 *   take the lock last; with `now()` it would see negative elapsed time and drain the bucket.
 *
 * Contention is per user only: other users' submits never wait on this row.
 */
export const QUOTA_GATE_SQL = `
WITH limits AS (
  SELECT coalesce(o.submits_per_minute, $2::int) AS per_minute,
         coalesce(o.max_active_tasks, $3::int) AS max_active
    FROM (VALUES (1)) AS one(x)
    LEFT JOIN principal_quotas o ON o.user_id = $1
)
INSERT INTO submit_buckets AS b (user_id, per_minute, tokens, refilled_at)
SELECT $1, l.per_minute, l.per_minute - 1, clock_timestamp() FROM limits l
    ON CONFLICT (user_id) DO UPDATE
   SET per_minute = excluded.per_minute,
       tokens = least(excluded.per_minute::float8,
                      b.tokens + greatest(0, extract(epoch FROM clock_timestamp() - b.refilled_at))::float8
                                 * excluded.per_minute / 60.0) - 1,
       refilled_at = greatest(b.refilled_at, clock_timestamp())
RETURNING b.tokens + 1 AS available, b.per_minute,
          (SELECT max_active FROM limits) AS max_active`;

/**
 * The task insert, with the active-task quota as its condition: `$13` is the user's limit (0 =
 * none); `$14` is the submitter's tenant (fair share, docs/leases.md). Under the gate's row lock
 * this statement's fresh snapshot sees every committed task of the user, so the count is exact. The count reads `tasks_user_active_idx` and stops at the
 * limit: its cost is bounded by the quota, never by the user's backlog beyond it. One statement
 * rather than a count and then an insert saves a round trip on every checked submit, which is
 * then BEGIN, gate, insert, COMMIT (and a key lookup when a key is sent) against one before.
 *
 * No row back: the key was taken (ON CONFLICT, found by a lookup), or else the quota refused.
 */
export const TASK_INSERT_SQL = `
INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, input, metadata,
                   idempotency_key, request_hash, trace_context, deadline_at, tenant,
                   next_attempt_at)
SELECT $1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb,
       now() + $12::int * interval '1 second', $14, now()
 WHERE $13::int = 0
    OR (SELECT count(*) FROM (SELECT 1 FROM tasks
                               WHERE user_id = $2
                                 AND status IN ('queued', 'working', 'input_required')
                               LIMIT $13) AS active) < $13
    ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING *`;
