import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The catalog carries each toolset's MCP front-door exposure (`"mcp": {…}` in the mcpServers
 * file), published by pollers like the rest of the catalog: the API reads the catalog, never the
 * config file (which holds upstream secrets). NULL, as a poller from before this column writes
 * it, means the defaults.
 */
export class McpExposure1796200000000 implements MigrationInterface {
  name = 'McpExposure1796200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE toolsets ADD COLUMN mcp jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE toolsets DROP COLUMN mcp`);
  }
}
