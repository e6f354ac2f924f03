import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `workers.suspected_at` (docs/leases.md, "Workers"): when a live worker, right after its own
 * heartbeat landed, last saw this one silent past the dead-after window. A worker is dead only
 * once it is still silent a whole window after that: a database outage shorter than a run's
 * break could leave a live worker's heartbeat stale while another worker's run stayed unbroken
 * (the failover chaos run, seed 3).
 *
 * Rolling-deploy safe: a nullable column. An older poller neither sets nor reads it and judges
 * by its own rule; a newer one sets it as it beats, so it judges a worker dead a window later.
 */
export class WorkerSuspicion1796484000000 implements MigrationInterface {
  name = 'WorkerSuspicion1796484000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workers ADD COLUMN suspected_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workers DROP COLUMN suspected_at`);
  }
}
