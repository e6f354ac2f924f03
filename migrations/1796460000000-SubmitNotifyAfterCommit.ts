import { MigrationInterface, QueryRunner } from 'typeorm';

/** `tasks_notify` with the insert's NOTIFY sent only when `quiet_insert` is false. */
function tasksNotify(quietInsert: string): string {
  return `
      CREATE OR REPLACE FUNCTION tasks_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          IF NOT (${quietInsert}) THEN
            PERFORM pg_notify('mcp_tasks_due', 'submit');
          END IF;
        ELSIF NEW.cancel_requested_at IS NOT NULL AND OLD.cancel_requested_at IS NULL THEN
          PERFORM pg_notify('mcp_tasks_due', 'cancel');
        END IF;
        RETURN NULL;
      END $$`;
}

/**
 * The API's submit without a NOTIFY inside its transaction: the API sends the pollers' wake-up
 * itself once the submit has committed, one NOTIFY for all the submits that commit meanwhile
 * (docs/leases.md, "Wake-ups").
 *
 * Why: a transaction that NOTIFYs holds one database-wide lock from its commit until its WAL is
 * flushed, so every notifying commit waits for the one before it and none share a flush. Each
 * submit did, while it also held its user's bucket row (docs/benchmarks.md, "API submit at a
 * fixed offered rate").
 *
 * `submit_task_notify_after_commit` takes `submit_task`'s arguments and answers as it does; it
 * sets `mcp.notify_after_commit` for its transaction, and `tasks_notify` then leaves out the
 * insert's NOTIFY. Call it only as its own statement in autocommit: the setting lasts until the
 * transaction ends. Every other insert (an older API during a rolling deploy, the CLI, a
 * script) still notifies from the trigger, so mixed versions only differ in who sends it.
 */
export class SubmitNotifyAfterCommit1796460000000 implements MigrationInterface {
  name = 'SubmitNotifyAfterCommit1796460000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      tasksNotify(`coalesce(current_setting('mcp.notify_after_commit', true), '') = 'on'`),
    );
    await q.query(`
      CREATE FUNCTION submit_task_notify_after_commit(
        p_id text, p_user text, p_thread text, p_toolset text, p_contract text, p_server text,
        p_input jsonb, p_metadata jsonb, p_key text, p_hash text, p_trace jsonb,
        p_deadline_seconds integer, p_tenant text, p_per_minute integer, p_max_active integer,
        p_active_retry_seconds integer)
      RETURNS SETOF tasks LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        PERFORM set_config('mcp.notify_after_commit', 'on', true);
        RETURN QUERY SELECT * FROM submit_task(
          p_id, p_user, p_thread, p_toolset, p_contract, p_server, p_input, p_metadata, p_key,
          p_hash, p_trace, p_deadline_seconds, p_tenant, p_per_minute, p_max_active,
          p_active_retry_seconds);
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION submit_task_notify_after_commit`);
    await q.query(tasksNotify('false'));
  }
}
