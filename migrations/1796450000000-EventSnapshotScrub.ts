import { MigrationInterface, QueryRunner } from 'typeorm';

/** The body of `tasks_event_outbox` with `snapshot` as the task's copy in the event. */
function outbox(snapshot: string): string {
  return `
      CREATE OR REPLACE FUNCTION tasks_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        new_event_id bigint;
      BEGIN
        INSERT INTO task_events (task_id, user_id, thread_id, sequence, type, task, data)
        VALUES (NEW.id, NEW.user_id, NEW.thread_id, NEW.event_seq,
                CASE WHEN NEW.status IS DISTINCT FROM OLD.status
                     THEN 'task.' || NEW.status ELSE 'task.progress' END,
                ${snapshot},
                CASE WHEN NEW.status IS DISTINCT FROM OLD.status
                     THEN jsonb_build_object('previous_status', OLD.status)
                     ELSE jsonb_build_object('progress', NEW.progress) END)
        RETURNING id INTO new_event_id;
        INSERT INTO webhook_deliveries (subscription_id, event_id, next_attempt_at)
        SELECT s.id, new_event_id, now()
          FROM webhook_subscriptions s
         WHERE s.user_id = NEW.user_id AND s.disabled_at IS NULL;
        IF FOUND THEN
          PERFORM pg_notify('mcp_webhooks_due', '');
        END IF;
        PERFORM pg_notify('mcp_task_events', json_build_array(NEW.user_id, NEW.thread_id)::text);
        RETURN NULL;
      END $$`;
}

const SUMMARY = `
  'id', NEW.id, 'thread_id', NEW.thread_id, 'toolset', NEW.toolset, 'status', NEW.status,
  'created_at', NEW.created_at, 'updated_at', NEW.updated_at, 'submitted_at', NEW.submitted_at,
  'completed_at', NEW.completed_at, 'next_attempt_at', NEW.next_attempt_at,
  'cancel_requested_at', NEW.cancel_requested_at, 'consecutive_errors', NEW.consecutive_errors,
  'progress', NEW.progress, 'error_code', NEW.error_code, 'error_message', NEW.error_message,
  'last_error', NEW.last_error, 'metadata', NEW.metadata`;

/**
 * The event's copy of a task also holds the internal values the error scrubber removes from an
 * upstream's error text (remote task and session IDs, server, pinned worker, lease owner):
 * without them an event or webhook showed an upstream message that quoted, say, the server's
 * name, where the API's GET of the same task shows `[redacted]`. The copy is stored only; what
 * an event shows still goes through the projection's whitelist (libs/views).
 */
export class EventSnapshotScrub1796450000000 implements MigrationInterface {
  name = 'EventSnapshotScrub1796450000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      outbox(`jsonb_build_object(${SUMMARY},
  'remote_task_id', NEW.remote_task_id, 'remote_session_id', NEW.remote_session_id,
  'server', NEW.server, 'pinned_worker_id', NEW.pinned_worker_id,
  'lease_owner', NEW.lease_owner)`),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(outbox(`jsonb_build_object(${SUMMARY})`));
  }
}
