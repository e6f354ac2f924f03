import { MigrationInterface, QueryRunner } from 'typeorm';

/** The statuses of a task that is still active: it has a lease row, and only then. */
const ACTIVE = `('queued', 'working', 'input_required')`;
const TERMINAL = `('completed', 'failed', 'cancelled')`;

/** The parameters of `submit_task` and `submit_task_notify_after_commit`, as they were. */
const SUBMIT_PARAMETERS = `
        p_id text, p_user text, p_thread text, p_toolset text, p_contract text, p_server text,
        p_input jsonb, p_metadata jsonb, p_key text, p_hash text, p_trace jsonb,
        p_deadline_seconds integer, p_tenant text, p_per_minute integer, p_max_active integer,
        p_active_retry_seconds integer`;

/**
 * What the event's copy of a task holds (the projection's summary and the values the error
 * scrubber removes), from the new row `n` and its lease row `l` (absent once terminal).
 */
const SNAPSHOT = `jsonb_build_object(
  'id', n.id, 'thread_id', n.thread_id, 'toolset', n.toolset, 'status', n.status,
  'created_at', n.created_at, 'updated_at', n.updated_at, 'submitted_at', n.submitted_at,
  'completed_at', n.completed_at, 'next_attempt_at', l.next_attempt_at,
  'cancel_requested_at', n.cancel_requested_at, 'consecutive_errors', n.consecutive_errors,
  'progress', n.progress, 'error_code', n.error_code, 'error_message', n.error_message,
  'last_error', n.last_error, 'metadata', n.metadata,
  'remote_task_id', n.remote_task_id, 'remote_session_id', n.remote_session_id,
  'server', n.server, 'pinned_worker_id', n.pinned_worker_id, 'lease_owner', l.lease_owner)`;

/**
 * The lease and the due time move out of `tasks` into `task_leases`, a narrow table with one row
 * per active task (docs/leases.md, "The lease table"), so that claiming and ending a task cost
 * Postgres little (docs/benchmarks.md, "What the profiles showed").
 *
 * - A claim updates only the narrow row. Its due index holds the rows without a lease and its
 *   leased index the rows with one, so a claim moves a row from one partial index to the other
 *   instead of writing an entry into each of the seven indexes of the wide row.
 * - `tasks` keeps no index on a column an attempt changes (the active-task count reads the lease
 *   table; retention reads `created_at`), and leaves a fifth of each page free, so the writes of
 *   an attempt (handle, poll, end) are HOT updates.
 * - The triggers keep the rule the old CHECK constraint did, for every writer: an inserted
 *   active task gets its lease row (due now), a task that ends loses it. The lease row is the
 *   task's due time and claim, so an active task is exactly a task with a lease row.
 * - The event outbox runs once per statement over its transition tables instead of once per
 *   row, and takes `next_attempt_at` and `lease_owner` for the event's copy from the lease row.
 * - `task_rows` is the task as the code reads it: `tasks` with its lease columns.
 *
 * Stop-the-fleet: old pollers write the lease columns of `tasks`, which this drops, so the
 * migration refuses to run while a poller is alive (docs/operations.md, "Upgrading to the lease
 * table"). Expired leases of pollers that died are carried over and rescued as usual.
 */
export class LeaseTable1796470000000 implements MigrationInterface {
  name = 'LeaseTable1796470000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM workers
                    WHERE stopped_at IS NULL AND heartbeat_at > now() - interval '1 minute') THEN
          RAISE EXCEPTION 'migration LeaseTable1796470000000 needs the poller fleet stopped'
            USING HINT = 'a poller heartbeat is less than a minute old: scale the pollers (and '
                         'the APIs) to zero, run the migration again, then start this release '
                         '(docs/operations.md, "Upgrading to the lease table")';
        END IF;
      END $$`);

    await q.query(`
      CREATE TABLE task_leases (
        task_id text PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
        user_id text NOT NULL,
        principal text NOT NULL,
        server text NOT NULL,
        queued boolean NOT NULL DEFAULT true,
        cancel_requested boolean NOT NULL DEFAULT false,
        answers_waiting boolean NOT NULL DEFAULT false,
        claim_count integer NOT NULL DEFAULT 0,
        pinned_worker_id text,
        deadline_at timestamptz,
        next_attempt_at timestamptz NOT NULL,
        lease_owner text,
        lease_token uuid,
        lease_expires_at timestamptz,
        CONSTRAINT task_leases_lease_whole CHECK (
          (lease_token IS NULL) = (lease_expires_at IS NULL)
          AND (lease_token IS NULL) = (lease_owner IS NULL))
      )`);
    await q.query(`
      INSERT INTO task_leases (task_id, user_id, principal, server, queued, cancel_requested,
                               claim_count, pinned_worker_id, deadline_at, next_attempt_at,
                               lease_owner, lease_token, lease_expires_at)
      SELECT id, user_id, coalesce(tenant, user_id), server, status = 'queued',
             cancel_requested_at IS NOT NULL, claim_count, pinned_worker_id, deadline_at,
             next_attempt_at, lease_owner, lease_token, lease_expires_at
        FROM tasks
       WHERE status IN ${ACTIVE}`);
    await q.query(`
      CREATE INDEX task_leases_due_idx ON task_leases (next_attempt_at)
       WHERE lease_token IS NULL`);
    await q.query(`
      CREATE INDEX task_leases_principal_due_idx ON task_leases (principal, next_attempt_at)
       WHERE lease_token IS NULL`);
    await q.query(`
      CREATE INDEX task_leases_leased_idx ON task_leases (lease_expires_at)
       WHERE lease_token IS NOT NULL`);
    await q.query(`CREATE INDEX task_leases_user_idx ON task_leases (user_id)`);
    await q.query(`
      CREATE INDEX task_leases_deadline_idx ON task_leases (deadline_at)
       WHERE deadline_at IS NOT NULL AND NOT cancel_requested`);
    await q.query(`
      CREATE INDEX task_leases_pinned_idx ON task_leases (pinned_worker_id)
       WHERE pinned_worker_id IS NOT NULL`);

    // What read, wrote or checked the old columns goes with them.
    await q.query(`DROP TRIGGER tasks_event_outbox ON tasks`);
    await q.query(`DROP FUNCTION tasks_event_outbox`);
    await q.query(`DROP TRIGGER tasks_answer_due ON tasks`);
    await q.query(`DROP FUNCTION tasks_answer_due`);
    await q.query(`DROP FUNCTION submit_task_notify_after_commit`);
    await q.query(`DROP FUNCTION submit_task`);
    await q.query(`ALTER TABLE tasks DROP CONSTRAINT tasks_due_iff_active`);
    await q.query(`ALTER TABLE tasks DROP CONSTRAINT tasks_terminal_has_no_lease`);
    for (const index of [
      'tasks_due_idx',
      'tasks_leased_idx',
      'tasks_principal_due_idx',
      'tasks_deadline_idx',
      'tasks_user_active_idx',
      'tasks_completed_idx',
    ]) {
      await q.query(`DROP INDEX ${index}`);
    }
    await q.query(`
      ALTER TABLE tasks DROP COLUMN next_attempt_at, DROP COLUMN lease_owner,
                        DROP COLUMN lease_token, DROP COLUMN lease_expires_at`);
    await q.query(`CREATE INDEX tasks_created_idx ON tasks (created_at)`);
    await q.query(`ALTER TABLE tasks SET (fillfactor = 80)`);

    // The task as the code reads it. `claim_count` comes from the lease row while the task is
    // active. A view keeps the column list it was made with, so a migration that adds a column
    // to `tasks` makes the view again (test/foundation/schema/schema.test.ts checks that it has them all).
    const columns = (
      (await q.query(
        `SELECT column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'tasks'
            AND column_name <> 'claim_count'
          ORDER BY ordinal_position`,
      )) as { column_name: string }[]
    ).map((c) => `t.${c.column_name}`);
    await q.query(`
      CREATE VIEW task_rows AS
      SELECT ${columns.join(', ')},
             coalesce(l.claim_count, t.claim_count) AS claim_count,
             l.next_attempt_at, l.lease_owner, l.lease_token, l.lease_expires_at
        FROM tasks t
        LEFT JOIN task_leases l ON l.task_id = t.id`);

    await q.query(`
      CREATE FUNCTION tasks_lease_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO task_leases (task_id, user_id, principal, server, queued, cancel_requested,
                                 pinned_worker_id, deadline_at, next_attempt_at)
        SELECT n.id, n.user_id, coalesce(n.tenant, n.user_id), n.server, n.status = 'queued',
               n.cancel_requested_at IS NOT NULL, n.pinned_worker_id, n.deadline_at, now()
          FROM inserted n
         WHERE n.status IN ${ACTIVE};
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER tasks_lease_insert AFTER INSERT ON tasks
        REFERENCING NEW TABLE AS inserted
        FOR EACH STATEMENT EXECUTE FUNCTION tasks_lease_insert()`);

    await q.query(`
      CREATE FUNCTION tasks_after_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
                 ${SNAPSHOT},
                 CASE WHEN n.status IS DISTINCT FROM o.status
                      THEN jsonb_build_object('previous_status', o.status)
                      ELSE jsonb_build_object('progress', n.progress) END
            FROM updated n
            JOIN previous o ON o.id = n.id
            LEFT JOIN task_leases l ON l.task_id = n.id
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
      END $$`);
    await q.query(`
      CREATE TRIGGER tasks_after_update AFTER UPDATE ON tasks
        REFERENCING OLD TABLE AS previous NEW TABLE AS updated
        FOR EACH STATEMENT EXECUTE FUNCTION tasks_after_update()`);

    await q.query(`
      CREATE FUNCTION submit_task(${SUBMIT_PARAMETERS})
      RETURNS SETOF task_rows LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_available float8;
        v_per_minute integer;
        v_max_active integer;
        v_active integer;
      BEGIN
        IF p_key IS NOT NULL THEN
          RETURN QUERY SELECT * FROM task_rows WHERE user_id = p_user AND idempotency_key = p_key;
          IF FOUND THEN RETURN; END IF;
        END IF;
        -- The gate: lock the user's bucket row (created full), refill it, take one token.
        WITH limits AS (
          SELECT coalesce(o.submits_per_minute, p_per_minute) AS per_minute,
                 coalesce(o.max_active_tasks, p_max_active) AS max_active
            FROM (VALUES (1)) AS one(x)
            LEFT JOIN principal_quotas o ON o.user_id = p_user
        )
        INSERT INTO submit_buckets AS b (user_id, per_minute, tokens, refilled_at)
        SELECT p_user, l.per_minute, l.per_minute - 1, clock_timestamp() FROM limits l
            ON CONFLICT (user_id) DO UPDATE
           SET per_minute = excluded.per_minute,
               tokens = least(excluded.per_minute::float8,
                              b.tokens + greatest(0, extract(epoch FROM clock_timestamp()
                                                                 - b.refilled_at))::float8
                                         * excluded.per_minute / 60.0) - 1,
               refilled_at = greatest(b.refilled_at, clock_timestamp())
        RETURNING b.tokens + 1, b.per_minute, (SELECT max_active FROM limits)
             INTO v_available, v_per_minute, v_max_active;
        IF v_per_minute > 0 AND v_available < 1 THEN
          RAISE EXCEPTION 'submit quota' USING ERRCODE = 'QUOTA', DETAIL = format(
            'submits_per_minute %s %s', v_per_minute,
            greatest(1, ceil((1 - v_available) * 60 / v_per_minute)));
        END IF;
        -- A fresh snapshot, after the lock: every committed task of the user counts. An active
        -- task is a task with a lease row.
        IF v_max_active > 0 THEN
          SELECT count(*) INTO v_active
            FROM (SELECT 1 FROM task_leases WHERE user_id = p_user LIMIT v_max_active) AS a;
          IF v_active >= v_max_active THEN
            RAISE EXCEPTION 'submit quota' USING ERRCODE = 'QUOTA', DETAIL = format(
              'active_tasks %s %s', v_max_active, greatest(1, p_active_retry_seconds));
          END IF;
        END IF;
        INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, input, metadata,
                           idempotency_key, request_hash, trace_context, deadline_at, tenant)
        VALUES (p_id, p_user, p_thread, p_toolset, p_contract, p_server, p_input, p_metadata,
                p_key, p_hash, p_trace, now() + p_deadline_seconds * interval '1 second',
                p_tenant)
        ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING;
        IF FOUND THEN
          RETURN QUERY SELECT * FROM task_rows WHERE id = p_id;
        ELSE
          -- The same key, committed by a concurrent submit since the lookup above.
          RETURN QUERY SELECT * FROM task_rows WHERE user_id = p_user AND idempotency_key = p_key;
        END IF;
      END $$`);
    await q.query(`
      CREATE FUNCTION submit_task_notify_after_commit(${SUBMIT_PARAMETERS})
      RETURNS SETOF task_rows LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM set_config('mcp.notify_after_commit', 'on', true);
        RETURN QUERY SELECT * FROM submit_task(
          p_id, p_user, p_thread, p_toolset, p_contract, p_server, p_input, p_metadata, p_key,
          p_hash, p_trace, p_deadline_seconds, p_tenant, p_per_minute, p_max_active,
          p_active_retry_seconds);
      END $$`);
  }

  /**
   * One way: the old columns' triggers and functions were rewritten over three earlier
   * migrations, and a poller of this release writes only the lease table. Going back is the
   * backup taken before the upgrade (docs/operations.md, "Upgrading to the lease table").
   */
  down(): Promise<void> {
    return Promise.reject(
      new Error('LeaseTable1796470000000 is one way: restore the backup taken before it'),
    );
  }
}
