import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tasks, workers, the toolset catalog and API keys.
 *
 * Why the shape:
 * - `next_attempt_at` is NULL exactly when a task is terminal (CHECK), so the partial claim
 *   index over `next_attempt_at IS NOT NULL` never holds a terminal row: claim cost follows the
 *   live backlog, not the table.
 * - The status model is enforced by a trigger, so no code path (or a hand-written UPDATE) can
 *   move a task outside it or change a terminal row.
 * - Inserts and cancel requests NOTIFY the pollers; a lost notification only costs latency.
 */
export class InitialSchema1764417600000 implements MigrationInterface {
  name = 'InitialSchema1764417600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tasks (
        id                      text PRIMARY KEY,
        user_id                 text NOT NULL,
        thread_id               text NOT NULL,
        toolset                 text NOT NULL,
        contract                text NOT NULL CHECK (contract IN ('ordinary', 'mcp-tasks', 'sync-call')),
        server                  text NOT NULL,
        status                  text NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued', 'working', 'input_required', 'completed', 'failed', 'cancelled')),
        input                   jsonb NOT NULL,
        metadata                jsonb,
        idempotency_key         text,
        request_hash            text,
        remote_task_id          text CHECK (char_length(remote_task_id) <= 255),
        remote_session_id       text,
        remote_protocol_version text,
        driver_state            jsonb,
        pinned_worker_id        text,
        submit_started_at       timestamptz,
        submit_attempts         integer NOT NULL DEFAULT 0,
        result                  jsonb,
        result_preview          text,
        result_truncated        boolean NOT NULL DEFAULT false,
        result_artifact         jsonb,
        input_required          jsonb,
        progress                jsonb,
        error_code              text,
        error_message           text CHECK (char_length(error_message) <= 4000),
        last_error              text,
        consecutive_errors      integer NOT NULL DEFAULT 0,
        poll_count              integer NOT NULL DEFAULT 0,
        claim_count             integer NOT NULL DEFAULT 0,
        last_success_at         timestamptz,
        cancel_requested_at     timestamptz,
        thread_deleted_at       timestamptz,
        event_seq               integer NOT NULL DEFAULT 0,
        created_at              timestamptz NOT NULL DEFAULT now(),
        updated_at              timestamptz NOT NULL DEFAULT now(),
        submitted_at            timestamptz,
        completed_at            timestamptz,
        lease_owner             text,
        lease_token             uuid,
        lease_expires_at        timestamptz,
        next_attempt_at         timestamptz,
        CONSTRAINT tasks_due_iff_active CHECK (
          (status IN ('completed', 'failed', 'cancelled')) = (next_attempt_at IS NULL)),
        CONSTRAINT tasks_terminal_has_no_lease CHECK (
          status NOT IN ('completed', 'failed', 'cancelled') OR lease_token IS NULL),
        CONSTRAINT tasks_failed_has_code CHECK (status <> 'failed' OR error_code IS NOT NULL)
      )`);
    // The claim scans this index in due order; terminal rows are not in it.
    await q.query(
      `CREATE INDEX tasks_due_idx ON tasks (next_attempt_at) WHERE next_attempt_at IS NOT NULL`,
    );
    // Keyset listing per thread and per user, newest first.
    await q.query(`CREATE INDEX tasks_thread_list_idx ON tasks (user_id, thread_id, created_at DESC, id DESC)
                   WHERE thread_deleted_at IS NULL`);
    await q.query(`CREATE INDEX tasks_user_list_idx ON tasks (user_id, created_at DESC, id DESC)
                   WHERE thread_deleted_at IS NULL`);
    await q.query(`CREATE UNIQUE INDEX tasks_idempotency_idx ON tasks (user_id, idempotency_key)
                   WHERE idempotency_key IS NOT NULL`);
    // Retention deletes terminal rows by age in small batches.
    await q.query(
      `CREATE INDEX tasks_completed_idx ON tasks (completed_at) WHERE completed_at IS NOT NULL`,
    );

    await q.query(`
      CREATE FUNCTION tasks_guard() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.status IN ('completed', 'failed', 'cancelled') THEN
          IF (to_jsonb(NEW) - 'thread_deleted_at' - 'updated_at')
             IS DISTINCT FROM (to_jsonb(OLD) - 'thread_deleted_at' - 'updated_at') THEN
            RAISE EXCEPTION 'task % is terminal (%) and cannot change', OLD.id, OLD.status
              USING ERRCODE = 'check_violation';
          END IF;
        ELSIF NEW.status IS DISTINCT FROM OLD.status AND NOT (
             (OLD.status = 'queued' AND NEW.status IN ('working', 'failed', 'cancelled'))
          OR (OLD.status = 'working' AND NEW.status IN ('input_required', 'completed', 'failed', 'cancelled'))
          OR (OLD.status = 'input_required' AND NEW.status IN ('working', 'completed', 'failed', 'cancelled'))
        ) THEN
          RAISE EXCEPTION 'illegal task transition % -> % for %', OLD.status, NEW.status, OLD.id
            USING ERRCODE = 'check_violation';
        END IF;
        NEW.updated_at := now();
        RETURN NEW;
      END $$`);
    await q.query(
      `CREATE TRIGGER tasks_guard BEFORE UPDATE ON tasks FOR EACH ROW EXECUTE FUNCTION tasks_guard()`,
    );

    await q.query(`
      CREATE FUNCTION tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM pg_notify('mcp_tasks_due', 'submit');
        ELSIF NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN
          PERFORM pg_notify('mcp_tasks_due', 'cancel');
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER tasks_notify_insert AFTER INSERT ON tasks
                   FOR EACH ROW EXECUTE FUNCTION tasks_notify()`);
    await q.query(`CREATE TRIGGER tasks_notify_cancel AFTER UPDATE OF cancel_requested_at ON tasks
                   FOR EACH ROW EXECUTE FUNCTION tasks_notify()`);

    await q.query(`
      CREATE TABLE workers (
        id           text PRIMARY KEY,
        host         text NOT NULL,
        pid          integer NOT NULL,
        version      text NOT NULL,
        started_at   timestamptz NOT NULL DEFAULT now(),
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        stopped_at   timestamptz
      )`);

    await q.query(`
      CREATE TABLE toolsets (
        name               text PRIMARY KEY,
        server             text NOT NULL,
        contract           text NOT NULL,
        description        text NOT NULL DEFAULT '',
        input_schema       jsonb NOT NULL DEFAULT '{"type":"object"}',
        available          boolean NOT NULL DEFAULT false,
        unavailable_reason text,
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE api_keys (
        id           text PRIMARY KEY,
        user_id      text NOT NULL,
        name         text NOT NULL,
        key_hash     text NOT NULL UNIQUE,
        created_at   timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at   timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE toolsets`);
    await q.query(`DROP TABLE workers`);
    await q.query(`DROP TABLE tasks`);
    await q.query(`DROP FUNCTION tasks_notify`);
    await q.query(`DROP FUNCTION tasks_guard`);
  }
}
