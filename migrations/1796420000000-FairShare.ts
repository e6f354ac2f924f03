import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair share and fleet-wide caps in the claim (docs/leases.md, "Fair share").
 *
 * - `tenant`: the tenant claim of the submitting JWT when AUTH_TENANT_CLAIM is set, else NULL.
 *   The claim's principal is `coalesce(tenant, user_id)`. Nullable, so adding it rewrites nothing.
 * - `tasks_principal_due_idx`: the claim walks the principals with active rows (a loose index
 *   scan on the leading expression) and takes each one's first due rows in due order from it.
 *   Partial like `tasks_due_idx`: terminal rows are not in it.
 * - `tasks_leased_idx`: the rows holding a lease (in flight on some worker), so counting the live
 *   leases per principal and per server reads only those, never the backlog.
 */
export class FairShare1796420000000 implements MigrationInterface {
  name = 'FairShare1796420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tasks ADD COLUMN tenant text CHECK (char_length(tenant) <= 255)`);
    await q.query(`CREATE INDEX tasks_principal_due_idx
                     ON tasks ((coalesce(tenant, user_id)), next_attempt_at)
                  WHERE next_attempt_at IS NOT NULL`);
    await q.query(`CREATE INDEX tasks_leased_idx ON tasks (lease_expires_at)
                  WHERE lease_token IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX tasks_leased_idx`);
    await q.query(`DROP INDEX tasks_principal_due_idx`);
    await q.query(`ALTER TABLE tasks DROP COLUMN tenant`);
  }
}
