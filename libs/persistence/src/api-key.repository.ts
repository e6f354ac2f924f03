import { createHash, randomBytes } from 'node:crypto';
import { randomId } from '@app/common';
import { API_KEY_REVOKED_CHANNEL } from './channels';
import { Queryable } from './database';

/** Every API key starts with this, so a bearer token is told apart from a JWT without parsing. */
export const API_KEY_PREFIX = 'mtg_';

/** An API key as listed: never the key itself, which is only ever known at creation. */
export interface ApiKeyInfo {
  id: string;
  userId: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** The owner of a presented key that is valid (known and not revoked). */
export interface ApiKeyOwner {
  id: string;
  userId: string;
  lastUsedAt: Date | null;
}

/** SHA-256 hex of a key: the only form stored (a database leak does not leak usable keys). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random key: the prefix and 256 bits in base64url. */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * API keys at rest: created by the operator CLI (and the embedded default's development key),
 * looked up by hash on every request that presents one.
 */
export class ApiKeyRepository {
  constructor(private readonly db: Queryable) {}

  /** Creates a key for `userId`; returns its info and the key, which is not stored. */
  async create(userId: string, name: string): Promise<{ info: ApiKeyInfo; key: string }> {
    const key = newApiKey();
    return { info: await this.register(userId, name, key), key };
  }

  /** Stores the hash of a key the caller already holds (the development key kept in a file). */
  async register(userId: string, name: string, key: string): Promise<ApiKeyInfo> {
    const rows = await this.db.query(
      `INSERT INTO api_keys (id, user_id, name, key_hash) VALUES ($1, $2, $3, $4) RETURNING *`,
      [randomId('key_', 16), userId, name, hashApiKey(key)],
    );
    return toInfo(rows[0]);
  }

  /** The owner of `key` if it is known and not revoked; null otherwise. */
  findActive(key: string): Promise<ApiKeyOwner | null> {
    return this.findActiveByHash(hashApiKey(key));
  }

  /** {@link findActive} for a key already hashed with {@link hashApiKey}. */
  async findActiveByHash(keyHash: string): Promise<ApiKeyOwner | null> {
    const rows = await this.db.query(
      `SELECT id, user_id, last_used_at FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [keyHash],
      'api_key_find_active',
    );
    if (rows.length === 0) return null;
    return {
      id: rows[0].id as string,
      userId: rows[0].user_id as string,
      lastUsedAt: rows[0].last_used_at as Date | null,
    };
  }

  /** Whether the key was ever stored, revoked or not. */
  async isKnown(key: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM api_keys WHERE key_hash = $1`, [
      hashApiKey(key),
    ]);
    return rows.length > 0;
  }

  /**
   * Records a use, at most once a minute per key (by the database clock): a key used on every
   * request must not turn every read into a write.
   */
  async touch(id: string): Promise<void> {
    await this.db.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }

  async list(userId?: string): Promise<ApiKeyInfo[]> {
    const rows = await this.db.query(
      `SELECT * FROM api_keys WHERE $1::text IS NULL OR user_id = $1 ORDER BY created_at, id`,
      [userId ?? null],
    );
    return rows.map(toInfo);
  }

  /**
   * Revokes a key; false when no such key exists. Revoking twice keeps the first time. Notifies
   * {@link API_KEY_REVOKED_CHANNEL} in the same statement, delivered when it commits.
   */
  async revoke(id: string): Promise<boolean> {
    const rows = await this.db.query(
      `WITH revoked AS (
         UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id)
       SELECT id, pg_notify('${API_KEY_REVOKED_CHANNEL}', id) FROM revoked`,
      [id],
    );
    return rows.length > 0;
  }
}

function toInfo(row: Record<string, unknown>): ApiKeyInfo {
  return {
    id: row.id as string,
    userId: row.user_id as string,
    name: row.name as string,
    createdAt: row.created_at as Date,
    lastUsedAt: row.last_used_at as Date | null,
    revokedAt: row.revoked_at as Date | null,
  };
}
