import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `webhook_deliveries_leased_idx`: the deliveries holding a lease, for the claim's rescues
 * (libs/persistence/src/sql/webhook-claim.sql.ts): a dead worker's deliveries are taken before
 * their leases end (docs/events.md, "Delivery"). A few rows per slot of the fleet, so the claim
 * reads them without touching the backlog of pending retries.
 *
 * Rolling-deploy safe: an index. An older poller's claim does not read it.
 */
export class WebhookRescue1796485000000 implements MigrationInterface {
  name = 'WebhookRescue1796485000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (lease_owner)
                   WHERE lease_token IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_leased_idx`);
  }
}
