import { MigrationInterface, QueryRunner } from 'typeorm';

/** Columns of a task copied into its event: what the shown summary needs, nothing else. */
const SUMMARY_SNAPSHOT = `jsonb_build_object(
  'id', NEW.id, 'thread_id', NEW.thread_id, 'toolset', NEW.toolset, 'status', NEW.status,
  'created_at', NEW.created_at, 'updated_at', NEW.updated_at, 'submitted_at', NEW.submitted_at,
  'completed_at', NEW.completed_at, 'next_attempt_at', NEW.next_attempt_at,
  'cancel_requested_at', NEW.cancel_requested_at, 'consecutive_errors', NEW.consecutive_errors,
  'progress', NEW.progress, 'error_code', NEW.error_code, 'error_message', NEW.error_message,
  'last_error', NEW.last_error, 'metadata', NEW.metadata)`;

/**
 * Completion events: an outbox written by triggers, webhook subscriptions and their deliveries.
 *
 * Why the shape:
 * - Events are written by triggers on `tasks`, so every status change (whichever repository or
 *   hand-written UPDATE makes it) commits together with its event, or not at all. The BEFORE
 *   trigger stamps `event_seq` in the very UPDATE (a terminal row cannot change afterwards, see
 *   `tasks_guard`; it sorts after `tasks_guard`, so illegal transitions are refused first); the
 *   AFTER trigger, which only runs when the stamp moved, inserts the event and its deliveries.
 * - Progress events are rate-limited per task (one per 2 s, tracked in `progress_event_at`):
 *   a chatty upstream must not turn into one webhook per poll.
 * - `tx` is the writing transaction's ID. A bigserial alone is not commit-ordered: a reader that
 *   has seen event 11 can still miss event 10 committed a moment later. Readers order by
 *   (tx, id) and only read events whose transaction is older than every running one (the
 *   snapshot's xmin); that prefix never changes, so a resume cursor never skips an event.
 * - Deliveries carry the same claim and fencing columns as tasks; `next_attempt_at` is NULL
 *   exactly when a delivery is finished, and the partial index holds only live ones.
 * - Hiding a task (thread deleted) deletes its events and their pending deliveries, and a hidden
 *   task writes none: a reused thread ID starts empty in the event stream too.
 */
export class Events1795955538043 implements MigrationInterface {
  name = 'Events1795955538043';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN progress_event_at timestamptz`);

    await q.query(`
      CREATE TABLE task_events (
        id         bigserial PRIMARY KEY,
        tx         xid8 NOT NULL DEFAULT pg_current_xact_id(),
        task_id    text NOT NULL,
        user_id    text NOT NULL,
        thread_id  text NOT NULL,
        sequence   integer NOT NULL,
        type       text NOT NULL CHECK (type IN ('task.working', 'task.input_required',
                     'task.progress', 'task.completed', 'task.failed', 'task.cancelled')),
        task       jsonb NOT NULL,
        data       jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (task_id, sequence)
      )`);
    // The SSE stream of a thread reads in (tx, id) order from a cursor.
    await q.query(
      `CREATE INDEX task_events_thread_idx ON task_events (user_id, thread_id, tx, id)`,
    );
    await q.query(`CREATE INDEX task_events_created_idx ON task_events (created_at)`);

    await q.query(`
      CREATE TABLE webhook_subscriptions (
        id              text PRIMARY KEY,
        user_id         text NOT NULL,
        url             text NOT NULL CHECK (char_length(url) <= 2048),
        description     text CHECK (char_length(description) <= 500),
        secret          text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        disabled_at     timestamptz,
        disabled_reason text
      )`);
    await q.query(`CREATE INDEX webhook_subscriptions_user_idx ON webhook_subscriptions (user_id)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id               bigserial PRIMARY KEY,
        subscription_id  text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        event_id         bigint NOT NULL REFERENCES task_events (id) ON DELETE CASCADE,
        status           text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'delivered', 'dead', 'disabled', 'skipped')),
        attempts         integer NOT NULL DEFAULT 0,
        created_at       timestamptz NOT NULL DEFAULT now(),
        finished_at      timestamptz,
        lease_owner      text,
        lease_token      uuid,
        lease_expires_at timestamptz,
        next_attempt_at  timestamptz,
        CONSTRAINT webhook_deliveries_due_iff_pending CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at)
                   WHERE next_attempt_at IS NOT NULL`);
    await q.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id)`,
    );

    // One row per attempt that got an answer (or failed), for GET /v1/webhooks/{id}/deliveries.
    await q.query(`
      CREATE TABLE webhook_attempts (
        id              bigserial PRIMARY KEY,
        delivery_id     bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        subscription_id text NOT NULL,
        event_id        bigint NOT NULL,
        attempt         integer NOT NULL,
        outcome         text NOT NULL,
        status_code     integer,
        duration_ms     integer NOT NULL,
        error           text CHECK (char_length(error) <= 500),
        next_retry_at   timestamptz,
        dead_lettered   boolean NOT NULL DEFAULT false,
        created_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_attempts_subscription_idx
                   ON webhook_attempts (subscription_id, id DESC)`);
    await q.query(`CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id)`);

    await q.query(`
      CREATE FUNCTION tasks_event_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.thread_deleted_at IS NOT NULL THEN
          RETURN NEW;
        END IF;
        IF NEW.status IS DISTINCT FROM OLD.status THEN
          IF NEW.status <> 'queued' THEN
            NEW.event_seq := OLD.event_seq + 1;
          END IF;
        ELSIF NEW.status IN ('working', 'input_required')
              AND NEW.progress IS NOT NULL
              AND NEW.progress IS DISTINCT FROM OLD.progress
              AND (OLD.progress_event_at IS NULL
                   OR OLD.progress_event_at <= now() - interval '2 seconds') THEN
          NEW.event_seq := OLD.event_seq + 1;
          NEW.progress_event_at := now();
        END IF;
        RETURN NEW;
      END $$`);
    // Named to sort after tasks_guard: BEFORE triggers fire in name order.
    await q.query(`CREATE TRIGGER tasks_stamp_event BEFORE UPDATE ON tasks
                   FOR EACH ROW EXECUTE FUNCTION tasks_event_stamp()`);

    await q.query(`
      CREATE FUNCTION tasks_event_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        new_event_id bigint;
      BEGIN
        INSERT INTO task_events (task_id, user_id, thread_id, sequence, type, task, data)
        VALUES (NEW.id, NEW.user_id, NEW.thread_id, NEW.event_seq,
                CASE WHEN NEW.status IS DISTINCT FROM OLD.status
                     THEN 'task.' || NEW.status ELSE 'task.progress' END,
                ${SUMMARY_SNAPSHOT},
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
      END $$`);
    await q.query(`CREATE TRIGGER tasks_event_outbox AFTER UPDATE ON tasks FOR EACH ROW
                   WHEN (NEW.event_seq IS DISTINCT FROM OLD.event_seq)
                   EXECUTE FUNCTION tasks_event_outbox()`);

    await q.query(`
      CREATE FUNCTION tasks_hide_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM task_events WHERE task_id = NEW.id;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER tasks_hide_events AFTER UPDATE OF thread_deleted_at ON tasks
                   FOR EACH ROW WHEN (OLD.thread_deleted_at IS NULL AND NEW.thread_deleted_at IS NOT NULL)
                   EXECUTE FUNCTION tasks_hide_events()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tasks_hide_events ON tasks`);
    await q.query(`DROP TRIGGER tasks_event_outbox ON tasks`);
    await q.query(`DROP TRIGGER tasks_stamp_event ON tasks`);
    await q.query(`DROP FUNCTION tasks_hide_events`);
    await q.query(`DROP FUNCTION tasks_event_outbox`);
    await q.query(`DROP FUNCTION tasks_event_stamp`);
    await q.query(`DROP TABLE webhook_attempts`);
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_subscriptions`);
    await q.query(`DROP TABLE task_events`);
    await q.query(`ALTER TABLE tasks DROP COLUMN progress_event_at`);
  }
}
