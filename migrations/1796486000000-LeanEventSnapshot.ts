import { MigrationInterface, QueryRunner } from 'typeorm';

const TERMINAL = `('completed', 'failed', 'cancelled')`;

/** The columns of the event's copy that every event holds (the projection's summary). */
const SUMMARY = `
  'id', n.id, 'thread_id', n.thread_id, 'toolset', n.toolset, 'status', n.status,
  'created_at', n.created_at, 'updated_at', n.updated_at, 'submitted_at', n.submitted_at,
  'completed_at', n.completed_at, 'next_attempt_at', l.next_attempt_at,
  'cancel_requested_at', n.cancel_requested_at, 'consecutive_errors', n.consecutive_errors,
  'progress', n.progress, 'error_code', n.error_code, 'error_message', n.error_message,
  'last_error', n.last_error, 'metadata', n.metadata`;

/** The internal values the error scrubber removes from an upstream's text. */
const INTERNALS = `
  'remote_task_id', n.remote_task_id, 'remote_session_id', n.remote_session_id,
  'server', n.server, 'pinned_worker_id', n.pinned_worker_id, 'lease_owner', l.lease_owner`;

/** The event's copy before this migration: every column, every event. */
const SNAPSHOT_BEFORE = `jsonb_build_object(${SUMMARY},${INTERNALS})`;

/** The event's copy from this migration on: the internals only beside a stored error text. */
const SNAPSHOT = `jsonb_build_object(${SUMMARY})
  || CASE WHEN n.error_message IS NULL THEN '{}'::jsonb
          ELSE jsonb_build_object(${INTERNALS}) END`;

/** The lease row of each updated task, before this migration: probed for every row. */
const LEASE_BEFORE = `LEFT JOIN task_leases l ON l.task_id = n.id`;

/**
 * The lease row from this migration on: read only for a task still active. The statement's own
 * DELETE above has just removed the lease row of every task that ended, so there it is absent
 * either way; `OFFSET 0` keeps the subquery from being pulled up into a join, where the status
 * test would run after the probe instead of before it.
 */
const LEASE = `LEFT JOIN LATERAL (
              SELECT x.next_attempt_at, x.lease_owner
                FROM task_leases x
               WHERE x.task_id = n.id AND n.status NOT IN ${TERMINAL}
              OFFSET 0) l ON true`;

function afterUpdate(snapshot: string, lease: string): string {
  return `
      CREATE OR REPLACE FUNCTION tasks_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        deliveries integer;
      BEGIN
        DELETE FROM task_leases l USING updated n
         WHERE l.task_id = n.id AND n.status IN ${TERMINAL};
        WITH events AS (
          INSERT INTO task_events (task_id, user_id, thread_id, sequence, type, task, data)
          SELECT n.id, n.user_id, n.thread_id, n.event_seq,
                 CASE WHEN n.status IS DISTINCT FROM o.status
                      THEN 'task.' || n.status ELSE 'task.progress' END,
                 ${snapshot},
                 CASE WHEN n.status IS DISTINCT FROM o.status
                      THEN jsonb_build_object('previous_status', o.status)
                      ELSE jsonb_build_object('progress', n.progress) END
            FROM updated n
            JOIN previous o ON o.id = n.id
            ${lease}
           WHERE n.event_seq IS DISTINCT FROM o.event_seq
          RETURNING id, user_id
        )
        INSERT INTO webhook_deliveries (subscription_id, event_id, next_attempt_at)
        SELECT s.id, e.id, now()
          FROM events e
          JOIN webhook_subscriptions s ON s.user_id = e.user_id AND s.disabled_at IS NULL;
        GET DIAGNOSTICS deliveries = ROW_COUNT;
        IF deliveries > 0 THEN
          PERFORM pg_notify('mcp_webhooks_due', '');
        END IF;
        -- One wake-up per thread with new events (the API's event streams listen per thread).
        PERFORM pg_notify('mcp_task_events', json_build_array(p.user_id, p.thread_id)::text)
           FROM (SELECT DISTINCT n.user_id, n.thread_id
                   FROM updated n JOIN previous o ON o.id = n.id
                  WHERE n.event_seq IS DISTINCT FROM o.event_seq) p;
        RETURN NULL;
      END $$`;
}

/**
 * A leaner event copy (docs/events.md, "The outbox: written in the status change's
 * transaction"; issue 38, "Make a finished row cheap"):
 *
 * - The internal values (remote IDs, server, workers) are kept only when the task has an
 *   `error_message`: the projection reads them for nothing else than scrubbing that text
 *   (libs/views error-text.projection.ts), and a task without one has nothing to scrub.
 * - The lease row is read only for a task still active. A task that ended has none (the
 *   statement deleted it), yet the join probed the lease table's key for every ended task, the
 *   burn-down's whole path.
 *
 * Measured in docs/benchmarks.md, "A leaner event copy, and a fair claim that no longer stops
 * short (issue 38)". Rolling-deploy safe: a function body; an older API reads a copy without the
 * internals only where it has no error text to scrub.
 */
export class LeanEventSnapshot1796486000000 implements MigrationInterface {
  name = 'LeanEventSnapshot1796486000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(afterUpdate(SNAPSHOT, LEASE));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(afterUpdate(SNAPSHOT_BEFORE, LEASE_BEFORE));
  }
}
