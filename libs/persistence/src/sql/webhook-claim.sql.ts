/**
 * The webhook deliveries' claim: the same shape as the tasks' claim (sql/claim.sql.ts), so the
 * same reasoning and recovery apply.
 *
 * - Due rows in due order from the partial index (finished deliveries are not in it),
 *   `LIMIT $2` = the worker's free slots, `FOR UPDATE SKIP LOCKED` so claimers pass each other.
 * - A fresh `lease_token` per claim, and `next_attempt_at = now() + lease`: a worker killed
 *   mid-delivery leaves a row that is simply due again once its lease ends; no sweeper.
 * - Rescues first: a live lease whose owner is dead by the rule of worker-liveness.sql.ts (`$4`
 *   the dead-after window in ms, judged only by a claimer that may judge) is taken before its
 *   end, and before due rows (docs/events.md, "Delivery"). A delivery's lease must outlast
 *   its request (at least 30 s) and is never renewed, so a crashed worker's deliveries would
 *   otherwise wait out that whole lease; the dead-after window is shorter. Should the judge be
 *   wrong, the delivery is sent twice, which webhooks allow (the same `webhook-id`), and the
 *   first owner's write is fenced out. Read from `webhook_deliveries_leased_idx` (the rows
 *   holding a lease, a few per slot of the fleet).
 * - `attempts` counts claims, so a delivery that crashes its worker still reaches the window's
 *   end and is dead-lettered instead of looping forever.
 * - The subscription (URL, secret) and the event come back in the same statement; the secret
 *   never leaves the poller. Times come from the database clock (`db_now_s` signs the message).
 */
import { mayJudge, notDead } from './worker-liveness.sql';

export const WEBHOOK_CLAIM_SQL = `
WITH rescues AS (
  SELECT d.id
    FROM webhook_deliveries d
   WHERE d.lease_token IS NOT NULL
     AND d.lease_expires_at > now()
     AND d.lease_owner <> $1
     AND NOT EXISTS (SELECT 1 FROM workers w
                      WHERE w.id = d.lease_owner AND ${notDead('w', '$4')})
     AND ${mayJudge('$1', '$4')}
   LIMIT $2
   FOR UPDATE SKIP LOCKED
),
pending AS (
  SELECT d.id
    FROM webhook_deliveries d
   WHERE d.next_attempt_at IS NOT NULL
     AND d.next_attempt_at <= now()
   ORDER BY d.next_attempt_at
   LIMIT $2 - (SELECT count(*) FROM rescues)
   FOR UPDATE SKIP LOCKED
),
due AS (
  SELECT id FROM rescues
  UNION ALL
  SELECT id FROM pending
)
UPDATE webhook_deliveries d
   SET lease_owner      = $1,
       lease_token      = gen_random_uuid(),
       lease_expires_at = now() + make_interval(secs => $3::float8 / 1000),
       next_attempt_at  = now() + make_interval(secs => $3::float8 / 1000),
       attempts         = d.attempts + 1
  FROM due, webhook_subscriptions s, task_events e
 WHERE d.id = due.id
   AND s.id = d.subscription_id
   AND e.id = d.event_id
RETURNING d.id::text AS id, d.lease_token, d.attempts, d.subscription_id,
          s.url, s.secret, (s.disabled_at IS NOT NULL) AS subscription_disabled,
          extract(epoch FROM now() - d.created_at) * 1000 AS age_ms,
          floor(extract(epoch FROM now()))::bigint AS db_now_s,
          e.id::text AS event_id, e.tx::text AS event_tx, e.task_id, e.user_id, e.thread_id,
          e.sequence, e.type, e.task, e.data, e.created_at,
          (SELECT t.trace_context FROM tasks t WHERE t.id = e.task_id) AS trace_context`;

/**
 * Records one attempt's outcome, fenced like every write about a claimed row: it lands only
 * while the claim's token is current and unexpired (`$1` delivery, `$2` token).
 *
 * One statement, three effects: the delivery's new state (due again after `$4` ms, or
 * finished), its attempt row for the deliveries list, and on a 410 the subscription disabled.
 * Data-modifying CTEs run to completion whether or not the outer query reads them.
 */
export const WEBHOOK_FINISH_ATTEMPT_SQL = `
WITH d AS (
  UPDATE webhook_deliveries
     SET status           = $3,
         next_attempt_at  = CASE WHEN $3 = 'pending'
                                 THEN now() + make_interval(secs => $4::float8 / 1000) END,
         finished_at      = CASE WHEN $3 = 'pending' THEN NULL ELSE now() END,
         lease_owner      = NULL,
         lease_token      = NULL,
         lease_expires_at = NULL
   WHERE id = $1 AND lease_token = $2 AND lease_expires_at > now()
  RETURNING id, subscription_id, event_id, attempts, next_attempt_at
), disabled AS (
  UPDATE webhook_subscriptions
     SET disabled_at = coalesce(disabled_at, now()),
         disabled_reason = coalesce(disabled_reason, $9)
   WHERE $9::text IS NOT NULL AND id IN (SELECT subscription_id FROM d)
  RETURNING id
), attempt AS (
  INSERT INTO webhook_attempts (delivery_id, subscription_id, event_id, attempt, outcome,
                                status_code, duration_ms, error, next_retry_at, dead_lettered)
  SELECT d.id, d.subscription_id, d.event_id, d.attempts, $5, $6, $7, $8, d.next_attempt_at,
         $3 = 'dead'
    FROM d
  RETURNING id
)
SELECT id FROM d`;
