import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The quota-checked submit as one function call, so it costs one round trip, as the plain
 * insert did before quotas, instead of four (BEGIN, gate, insert, COMMIT).
 *
 * Why a function and not one statement: the active count must read after the user's bucket row
 * is locked, with a snapshot that sees the inserts committed while it waited (else two replicas
 * both pass at limit − 1). One statement has one snapshot, taken before any lock wait; inside a
 * VOLATILE PL/pgSQL function each command takes a fresh snapshot under READ COMMITTED, so the
 * order lock → count → insert holds, in one call and one transaction.
 *
 * Outcomes: the new row (its ID is `p_id`); an earlier task with the same idempotency key (another
 * ID: the caller tells replay from conflict), answered before any quota is spent; or a refusal,
 * SQLSTATE `QUOTA` with DETAIL `<quota> <limit> <retry-after seconds>`, which rolls back the
 * token taken. The insert's column list is the submit's: a migration that adds a column the API
 * sets must replace this function too.
 */
export class SubmitTaskFunction1796440000000 implements MigrationInterface {
  name = 'SubmitTaskFunction1796440000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION submit_task(
        p_id text, p_user text, p_thread text, p_toolset text, p_contract text, p_server text,
        p_input jsonb, p_metadata jsonb, p_key text, p_hash text, p_trace jsonb,
        p_deadline_seconds integer, p_tenant text, p_per_minute integer, p_max_active integer,
        p_active_retry_seconds integer)
      RETURNS SETOF tasks LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_available float8;
        v_per_minute integer;
        v_max_active integer;
        v_active integer;
      BEGIN
        IF p_key IS NOT NULL THEN
          RETURN QUERY SELECT * FROM tasks WHERE user_id = p_user AND idempotency_key = p_key;
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
        -- A fresh snapshot, after the lock: every committed task of the user counts.
        IF v_max_active > 0 THEN
          SELECT count(*) INTO v_active
            FROM (SELECT 1 FROM tasks
                   WHERE user_id = p_user AND status IN ('queued', 'working', 'input_required')
                   LIMIT v_max_active) AS a;
          IF v_active >= v_max_active THEN
            RAISE EXCEPTION 'submit quota' USING ERRCODE = 'QUOTA', DETAIL = format(
              'active_tasks %s %s', v_max_active, greatest(1, p_active_retry_seconds));
          END IF;
        END IF;
        RETURN QUERY
          INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, input, metadata,
                             idempotency_key, request_hash, trace_context, deadline_at, tenant,
                             next_attempt_at)
          VALUES (p_id, p_user, p_thread, p_toolset, p_contract, p_server, p_input, p_metadata,
                  p_key, p_hash, p_trace, now() + p_deadline_seconds * interval '1 second',
                  p_tenant, now())
          ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING *;
        IF NOT FOUND THEN
          -- The same key, committed by a concurrent submit since the lookup above.
          RETURN QUERY SELECT * FROM tasks WHERE user_id = p_user AND idempotency_key = p_key;
        END IF;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION submit_task`);
  }
}
