import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Task deadlines per toolset (docs/contracts.md, "Deadlines"): a toolset's `deadlineSeconds`
 * (published by pollers into `toolsets.deadline_seconds`) is stamped on each task at submit as
 * `deadline_at`. Past it a poller's sweep records a cancel request with `cancel_reason =
 * 'deadline'`, and the task ends `failed` / `deadline_exceeded` instead of `cancelled`.
 *
 * Why the ending is a trigger: every path that ends a cancel-requested task `cancelled` (the
 * cancel phase after the upstream cancel, the local end of a never-submitted task, an aborted
 * held call, and pollers of the previous release during a rolling deploy) then records the
 * deadline's outcome, without each learning the rule. The trigger is named to run before
 * `tasks_guard`, which then checks the rewritten transition.
 *
 * Rolling-deploy safe: nullable columns; a task submitted by an older API has no deadline.
 */
export class TaskDeadlines1796430000000 implements MigrationInterface {
  name = 'TaskDeadlines1796430000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE toolsets ADD COLUMN deadline_seconds integer
                   CHECK (deadline_seconds > 0)`);
    await q.query(`ALTER TABLE tasks ADD COLUMN deadline_at timestamptz`);
    await q.query(`ALTER TABLE tasks ADD COLUMN cancel_reason text
                   CHECK (cancel_reason IN ('deadline'))`);
    // The sweep's scan: active tasks with a deadline and no cancel request yet, in deadline
    // order. Rows leave the index once marked or ended, so it holds only the live deadlines.
    await q.query(`CREATE INDEX tasks_deadline_idx ON tasks (deadline_at)
                   WHERE deadline_at IS NOT NULL AND next_attempt_at IS NOT NULL
                     AND cancel_requested_at IS NULL`);
    await q.query(`
      CREATE FUNCTION tasks_deadline_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.status := 'failed';
        NEW.error_code := 'deadline_exceeded';
        NEW.error_message := format(
          'deadline exceeded: no end within %s s of submit; the upstream work was cancelled',
          round(extract(epoch FROM NEW.deadline_at - NEW.created_at)));
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER tasks_deadline_end BEFORE UPDATE OF status ON tasks
                   FOR EACH ROW
                   WHEN (NEW.status = 'cancelled' AND OLD.status <> 'cancelled'
                         AND NEW.cancel_reason = 'deadline')
                   EXECUTE FUNCTION tasks_deadline_end()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER tasks_deadline_end ON tasks`);
    await q.query(`DROP FUNCTION tasks_deadline_end`);
    await q.query(`DROP INDEX tasks_deadline_idx`);
    await q.query(`ALTER TABLE tasks DROP COLUMN cancel_reason`);
    await q.query(`ALTER TABLE tasks DROP COLUMN deadline_at`);
    await q.query(`ALTER TABLE toolsets DROP COLUMN deadline_seconds`);
  }
}
