import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A truthful catalog: which toolsets each live poller has configured, and since when none has.
 *
 * Why the shape:
 * - `workers.toolsets` is written once at registration (a poller's mcpServers file is read at
 *   boot only), so liveness of a toolset is a join of the heartbeat with this list: no extra
 *   write per heartbeat.
 * - `toolsets.removed_at` is set by a poller's sweep when no live worker lists the toolset and
 *   cleared when one does again (or publishes it). Kept apart from `available` and
 *   `unavailable_reason`, which stay the last publisher's view of the server, so a toolset
 *   that comes back shows its real state at once.
 */
export class ToolsetLiveness1796088318485 implements MigrationInterface {
  name = 'ToolsetLiveness1796088318485';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE workers ADD COLUMN toolsets text[] NOT NULL DEFAULT '{}'`);
    await q.query(`ALTER TABLE toolsets ADD COLUMN removed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE toolsets DROP COLUMN removed_at`);
    await q.query(`ALTER TABLE workers DROP COLUMN toolsets`);
  }
}
