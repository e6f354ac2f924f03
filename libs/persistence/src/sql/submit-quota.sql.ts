/**
 * The quota-checked submit: one call, one round trip, one transaction (autocommit). The function
 * (migrations/…-SubmitTaskFunction) locks the user's bucket row (creating it full on a first
 * submit), refills it and takes a token, then counts the user's active tasks with a snapshot
 * taken after the lock, then inserts. `$1` the new task ID, `$2…$13` the columns in
 * TaskRepository's order (`$13` the submitter's tenant, the fair-share principal: docs/leases.md),
 * then `$14` the default submits per minute, `$15` the default maximum active tasks (a
 * `principal_quotas` row overrides either), `$16` the Retry-After of an active-tasks refusal. The quotas are the user's, also
 * when a tenant is the fair-share principal.
 *
 * Why this shape:
 * - The row lock serialises one user's checked submits across every API replica until the call
 *   commits, so the count sees every committed insert of that user: two replicas can never both
 *   pass at limit − 1. One plain statement could not: its snapshot predates its lock wait.
 * - A refusal raises SQLSTATE `QUOTA`: the call's transaction rolls back, so a refused submit
 *   spends no token and leaves no row (nor event, nor outbox entry) behind.
 * - The bucket uses the database's clock, the same for every replica: `clock_timestamp()`, not
 *   `now()`, and never backwards (a call that began first may take the lock last).
 * - The active count reads the user's lease rows (`task_leases_user_idx`: an active task is one
 *   with a lease row) and stops at the limit: its cost is bounded by the quota, never by the
 *   user's backlog beyond it.
 * - Before quotas a submit was one INSERT; as one function call it still is one round trip
 *   (four as BEGIN, gate, insert, COMMIT: docs/benchmarks.md, "Submit quota check").
 *
 * Contention is per user only: other users' submits never wait on the row.
 *
 * The row comes back as one jsonb value (`task`), read by `toTaskRow` as it reads the event
 * outbox's snapshots. Returned as columns, pg parses a description of every column of `tasks`
 * and then the row on each call, which was about 7 % of the API's CPU per submit; as one jsonb
 * value it parses one column and calls `JSON.parse` (docs/benchmarks.md, "API CPU per submit,
 * fifth pass").
 *
 * Called through `submit_task_notify_after_commit` (migrations/…-SubmitNotifyAfterCommit): the
 * same function, without the trigger's NOTIFY in this transaction. TaskRepository sends the
 * pollers' wake-up once the call has returned, so the commit takes no database-wide lock.
 */
export const SUBMIT_TASK_SQL = `
SELECT to_jsonb(s) AS task FROM submit_task_notify_after_commit(
  $1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb, $12::int, $13, $14::int,
  $15::int, $16::int) s`;

/**
 * {@link SUBMIT_TASK_SQL} only while the toolset's catalog row is still the version the caller
 * checked the submit against: `$17` is that row's `xmin` as text, which every UPDATE of the row
 * changes. No row back means the row changed or is gone, and nothing was written (the caller
 * reads the catalog again and decides anew).
 *
 * Why: a submit read its catalog entry's version in a statement of its own before the insert,
 * one round trip of two; here the check rides on the insert's. The function takes `t.name` for
 * its toolset, a lateral reference, so the planner can only run it per matching `toolsets` row:
 * when the version differs there is no row and the function never runs. Measured in
 * docs/benchmarks.md ("API CPU per submit, third pass").
 */
export const SUBMIT_TASK_IF_CATALOG_SQL = `
SELECT to_jsonb(s) AS task FROM toolsets t
 CROSS JOIN LATERAL submit_task_notify_after_commit(
  $1, $2, $3, t.name, $5, $6, $7::jsonb, $8::jsonb, $9, $10, $11::jsonb, $12::int, $13, $14::int,
  $15::int, $16::int) s
 WHERE t.name = $4 AND t.xmin::text = $17`;
