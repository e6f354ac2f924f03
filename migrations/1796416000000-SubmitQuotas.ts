import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Submit quotas kept in Postgres, so every API replica enforces the same budget
 * (docs/operations.md, "Sizing quotas").
 *
 * - `principal_quotas`: per-user overrides of the two quotas, written by `npm run quotas`; a NULL
 *   column means "the setting's default".
 * - `submit_buckets`: one token bucket per user that has submitted. Its row is also the lock that
 *   serialises one user's quota-checked submits across replicas (the submit transaction updates
 *   it first), so the active count read after it cannot race another replica's insert.
 * - `tasks_user_active_idx`: the active-task count reads only this user's active rows, never
 *   their ended history. Rolling-deploy safe: old replicas insert as before, unchecked.
 */
export class SubmitQuotas1796416000000 implements MigrationInterface {
  name = 'SubmitQuotas1796416000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE principal_quotas (
        user_id            text PRIMARY KEY,
        max_active_tasks   integer CHECK (max_active_tasks >= 0),
        submits_per_minute integer CHECK (submits_per_minute >= 0),
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE submit_buckets (
        user_id     text PRIMARY KEY,
        per_minute  integer NOT NULL,
        tokens      double precision NOT NULL,
        refilled_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX tasks_user_active_idx ON tasks (user_id)
                   WHERE status IN ('queued', 'working', 'input_required')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tasks_user_active_idx`);
    await q.query(`DROP TABLE submit_buckets`);
    await q.query(`DROP TABLE principal_quotas`);
  }
}
