/**
 * One page of a thread's event stream after a cursor, for SSE.
 *
 * - Order is (tx, id), not id: ids come from a sequence and are not commit-ordered, so reading
 *   by id alone can pass over an id whose transaction commits a moment later. Every event of a
 *   transaction older than the snapshot's xmin is final (that transaction is over and no later
 *   one can get a smaller tx), so the stream only ever appends to that prefix and a cursor into
 *   it is exact. Rows of still-running-or-newer transactions come back with `settled = false`;
 *   they sort after every settled row, so the caller emits the settled prefix and checks again
 *   soon (the wait is as long as the oldest running write transaction, normally milliseconds).
 * - The (user_id, thread_id, tx, id) index serves the filter, the order and the row comparison.
 * - Hidden tasks have no events (hiding deletes them), so no join with tasks is needed here.
 */
export const THREAD_EVENTS_SQL = `
SELECT e.id::text AS id, e.tx::text AS tx, e.task_id, e.user_id, e.thread_id, e.sequence,
       e.type, e.task, e.data, e.created_at,
       e.tx < pg_snapshot_xmin(pg_current_snapshot()) AS settled
  FROM task_events e
 WHERE e.user_id = $1
   AND e.thread_id = $2
   AND (e.tx, e.id) > ($3::xid8, $4::bigint)
 ORDER BY e.tx, e.id
 LIMIT $5`;

/**
 * The same page across every thread of the user (`GET /v1/events`), served by the (user_id, tx,
 * id) index of migration UserEventStream; the settled rule is the one above.
 */
export const USER_EVENTS_SQL = `
SELECT e.id::text AS id, e.tx::text AS tx, e.task_id, e.user_id, e.thread_id, e.sequence,
       e.type, e.task, e.data, e.created_at,
       e.tx < pg_snapshot_xmin(pg_current_snapshot()) AS settled
  FROM task_events e
 WHERE e.user_id = $1
   AND (e.tx, e.id) > ($2::xid8, $3::bigint)
 ORDER BY e.tx, e.id
 LIMIT $4`;

/**
 * Retention: events older than EVENT_RETENTION_HOURS, in small batches, except those a delivery
 * still retries (a delivery outlives its event's window only while it is pending). Deliveries
 * and their attempts go with their event (ON DELETE CASCADE).
 */
export const DELETE_EXPIRED_EVENTS_SQL = `
DELETE FROM task_events
 WHERE id IN (SELECT e.id FROM task_events e
               WHERE e.created_at < now() - make_interval(hours => $1::int)
                 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                                  WHERE d.event_id = e.id AND d.next_attempt_at IS NOT NULL)
               ORDER BY e.created_at
               LIMIT $2
               FOR UPDATE SKIP LOCKED)
RETURNING id`;
