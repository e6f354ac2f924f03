import { MigrationInterface, QueryRunner } from 'typeorm';

/** The view's columns from `tasks` as migration LeaseTable made it: every column but these. */
const NOT_IN_VIEW = ['claim_count', 'retry_of'];

/**
 * `POST /v1/threads/{thread_id}/tasks/{task_id}/retry` (docs/api.md, "Retrying a failed task"):
 * the new task names the failed one in `retry_of`, set in the transaction that inserts it.
 * `task_rows` gains the column at its end (CREATE OR REPLACE VIEW may only append), so the
 * functions that answer its rows (`submit_task`) answer it too.
 *
 * Rolling-deploy safe: a nullable column without a default; older releases never read or write
 * it. No foreign key: retention deletes old tasks, and a retry outlives its original's row.
 */
export class RetryOf1796481000000 implements MigrationInterface {
  name = 'RetryOf1796481000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN retry_of text`);
    await q.query(viewSql(await taskColumns(q)));
  }

  async down(q: QueryRunner): Promise<void> {
    // A view loses a column only by being dropped, with every function that answers its rows,
    // so the column stays (older releases ignore it); going back only forgets the links.
    await q.query(`UPDATE tasks SET retry_of = NULL WHERE retry_of IS NOT NULL`);
  }
}

async function taskColumns(q: QueryRunner): Promise<string[]> {
  const rows = (await q.query(
    `SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'tasks'
      ORDER BY ordinal_position`,
  )) as { column_name: string }[];
  return rows.map((r) => r.column_name).filter((name) => !NOT_IN_VIEW.includes(name));
}

function viewSql(columns: string[]): string {
  return `
    CREATE OR REPLACE VIEW task_rows AS
    SELECT ${columns.map((c) => `t.${c}`).join(', ')},
           coalesce(l.claim_count, t.claim_count) AS claim_count,
           l.next_attempt_at, l.lease_owner, l.lease_token, l.lease_expires_at, t.retry_of
      FROM tasks t
      LEFT JOIN task_leases l ON l.task_id = t.id`;
}
