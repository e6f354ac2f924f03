import { Queryable } from './database';

/** A live console session: whose it is. */
export interface ConsoleSessionOwner {
  userId: string;
  /** When the session ends. */
  expiresAt: Date;
}

/**
 * Console sessions (migration ConsoleSessions): found by the SHA-256 of the cookie, live while
 * unexpired and, for one made from an API key, while that key is not revoked.
 */
export class ConsoleSessionRepository {
  constructor(private readonly db: Queryable) {}

  /** Stores a new session and, in passing, deletes expired ones (a small table stays small). */
  async create(
    idHash: string,
    userId: string,
    apiKeyId: string | null,
    expiresAt: Date,
  ): Promise<void> {
    await this.db.query(`DELETE FROM console_sessions WHERE expires_at < now()`);
    await this.db.query(
      `INSERT INTO console_sessions (id_hash, user_id, api_key_id, expires_at)
       VALUES ($1, $2, $3, $4)`,
      [idHash, userId, apiKeyId, expiresAt],
    );
  }

  async find(idHash: string): Promise<ConsoleSessionOwner | null> {
    const rows = await this.db.query(
      `SELECT s.user_id, s.expires_at FROM console_sessions s
         LEFT JOIN api_keys k ON k.id = s.api_key_id
        WHERE s.id_hash = $1 AND s.expires_at > now()
          AND (s.api_key_id IS NULL OR k.revoked_at IS NULL)`,
      [idHash],
      'console_session_find',
    );
    if (rows.length === 0) return null;
    return { userId: rows[0].user_id as string, expiresAt: rows[0].expires_at as Date };
  }

  async delete(idHash: string): Promise<void> {
    await this.db.query(`DELETE FROM console_sessions WHERE id_hash = $1`, [idHash]);
  }
}
