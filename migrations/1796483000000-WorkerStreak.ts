import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `workers.alive_since` (docs/leases.md, "Workers"): when this worker's unbroken run of
 * heartbeats began. A worker judges another dead (and takes its pinned rows, or counts its
 * toolsets gone) only once its own run is a dead-after window long: after a Postgres failover
 * every heartbeat is stale, and the promoted server's start time, which the older guard reads,
 * is the standby's, not the promotion's.
 *
 * Rolling-deploy safe: a column with a default. An older poller never moves it, so its run
 * counts from its registration, as its judgement did before.
 */
export class WorkerStreak1796483000000 implements MigrationInterface {
  name = 'WorkerStreak1796483000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workers ADD COLUMN alive_since timestamptz NOT NULL DEFAULT now()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workers DROP COLUMN alive_since`);
  }
}
