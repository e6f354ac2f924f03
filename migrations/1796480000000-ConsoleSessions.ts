import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions of the browser console (docs/console.md, "Sign-in and the session cookie"). A row per
 * signed-in browser: the SHA-256 of its cookie (the cookie itself is never stored), the user, the
 * API key it came from (a revoked key ends its sessions at once: the session read joins it, and a
 * deleted key takes its sessions with it), and when it expires. Signing out deletes the row, so a
 * copied cookie is dead too. Additive: older replicas never read the table.
 */
export class ConsoleSessions1796480000000 implements MigrationInterface {
  name = 'ConsoleSessions1796480000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE console_sessions (
        id_hash    text PRIMARY KEY,
        user_id    text NOT NULL,
        api_key_id text REFERENCES api_keys (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE console_sessions`);
  }
}
