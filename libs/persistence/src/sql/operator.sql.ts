/**
 * Operator commands (docs/operations.md, "Operator commands"). The two task writes are fenced
 * like every other write: they apply only while no live lease is held on the task's lease row
 * (`lease_expires_at` unset or past), so they never race a poller mid-attempt. A task with a
 * live lease is refused; the operator retries once the attempt ended or the lease expired.
 */

/**
 * Non-terminal tasks created at least $3 seconds ago, oldest first, with how long each has been
 * untouched (`idle_seconds`: since its `tasks` row was last written, by the submit, a poll's
 * answer, an error or a status change; a claim writes only the lease row and does not count)
 * and whether a poller holds it now.
 */
export const LIST_STUCK_TASKS_SQL = `
SELECT id, status, server, toolset, contract,
       extract(epoch FROM now() - updated_at) AS idle_seconds,
       extract(epoch FROM now() - created_at) AS age_seconds,
       next_attempt_at, consecutive_errors, claim_count, lease_owner,
       coalesce(lease_expires_at > now(), false) AS leased, last_error
  FROM task_rows
 WHERE next_attempt_at IS NOT NULL
   AND ($1::text IS NULL OR status = $1)
   AND ($2::text IS NULL OR server = $2)
   AND created_at <= now() - make_interval(secs => $3::float8)
 ORDER BY created_at
 LIMIT $4`;

/** Makes a non-terminal, unleased task due now; its error count and history stay. */
export const REDRIVE_TASK_SQL = `
UPDATE task_leases SET next_attempt_at = now()
 WHERE task_id = $1
   AND (lease_expires_at IS NULL OR lease_expires_at <= now())
RETURNING task_id AS id`;

/**
 * Ends a non-terminal, unleased task `failed` with code `failed_by_operator` and the operator's
 * reason; the events trigger tells its subscribers like any other failure. The lease row is
 * locked first (fenced-write.sql.ts) and goes with the `tasks_after_update` trigger.
 */
export const FORCE_FAIL_TASK_SQL = `
WITH lease AS (
  SELECT task_id, claim_count FROM task_leases
   WHERE task_id = $1 AND (lease_expires_at IS NULL OR lease_expires_at <= now())
     FOR UPDATE
)
UPDATE tasks
   SET status = 'failed', error_code = 'failed_by_operator', error_message = $2,
       completed_at = now(), claim_count = lease.claim_count
  FROM lease
 WHERE tasks.id = lease.task_id
RETURNING tasks.id`;

/** Why a task write above matched nothing. */
export const TASK_WRITE_REFUSAL_SQL = `
SELECT status, coalesce(lease_expires_at > now(), false) AS leased, lease_expires_at
  FROM task_rows WHERE id = $1`;

/** Dead-lettered webhook deliveries, newest first, with their last attempt's answer. */
export const LIST_DEAD_DELIVERIES_SQL = `
SELECT d.id::text AS id, d.subscription_id, d.attempts, d.created_at, d.finished_at,
       e.type AS event_type, e.task_id, a.status_code AS last_status_code, a.error AS last_error
  FROM webhook_deliveries d
  JOIN task_events e ON e.id = d.event_id
  LEFT JOIN LATERAL (SELECT status_code, error FROM webhook_attempts
                      WHERE delivery_id = d.id ORDER BY id DESC LIMIT 1) a ON true
 WHERE d.status = 'dead'
 ORDER BY d.finished_at DESC NULLS LAST, d.id DESC
 LIMIT $1`;

/**
 * Puts a dead-lettered delivery back in the queue, due now, with its claim count reset. Its
 * retry window still counts from the event, so an old delivery gets one attempt per replay.
 */
export const REPLAY_DELIVERY_SQL = `
UPDATE webhook_deliveries
   SET status = 'pending', next_attempt_at = now(), attempts = 0, finished_at = NULL,
       lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
 WHERE id = $1::bigint AND status = 'dead'
RETURNING id::text AS id`;

export const DELIVERY_STATUS_SQL = `SELECT status FROM webhook_deliveries WHERE id = $1::bigint`;

export const RECORD_ACTION_SQL = `
INSERT INTO operator_actions (actor, via, action, target, reason, outcome, detail)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id::text AS id, created_at`;

export const LIST_ACTIONS_SQL = `
SELECT id::text AS id, actor, via, action, target, reason, outcome, detail, created_at
  FROM operator_actions
 ORDER BY id DESC
 LIMIT $1`;
