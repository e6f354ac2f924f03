import { Queryable } from './database';

/** One user's quota overrides; null = the setting's default applies. */
export interface PrincipalQuota {
  userId: string;
  maxActiveTasks: number | null;
  submitsPerMinute: number | null;
  updatedAt: Date;
}

/** A change to one user's overrides: a number sets it, null returns it to the default. */
export interface QuotaChange {
  maxActiveTasks?: number | null;
  submitsPerMinute?: number | null;
}

/**
 * Per-user quota overrides (`principal_quotas`), written by `npm run quotas`. Every API replica
 * reads them in the submit transaction itself, so a change applies to the next submit
 * everywhere, with no restart (docs/operations.md, "Sizing quotas").
 */
export class QuotaRepository {
  constructor(private readonly db: Queryable) {}

  /** Applies `change` (fields left out keep their value); a row left with no override is removed. */
  async set(userId: string, change: QuotaChange): Promise<PrincipalQuota | null> {
    const keep = (field: keyof QuotaChange) => change[field] === undefined;
    const rows = await this.db.query(
      `INSERT INTO principal_quotas AS p (user_id, max_active_tasks, submits_per_minute)
       VALUES ($1, $2, $4)
       ON CONFLICT (user_id) DO UPDATE SET
         max_active_tasks = CASE WHEN $3 THEN p.max_active_tasks ELSE $2 END,
         submits_per_minute = CASE WHEN $5 THEN p.submits_per_minute ELSE $4 END,
         updated_at = now()
       RETURNING *`,
      [
        userId,
        change.maxActiveTasks ?? null,
        keep('maxActiveTasks'),
        change.submitsPerMinute ?? null,
        keep('submitsPerMinute'),
      ],
    );
    const row = toQuota(rows[0]);
    if (row.maxActiveTasks === null && row.submitsPerMinute === null) {
      await this.clear(userId);
      return null;
    }
    return row;
  }

  /** Removes the user's overrides; false when there were none. */
  async clear(userId: string): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM principal_quotas WHERE user_id = $1 RETURNING user_id`,
      [userId],
    );
    return rows.length > 0;
  }

  /** Every override, by user. */
  async list(): Promise<PrincipalQuota[]> {
    const rows = await this.db.query(`SELECT * FROM principal_quotas ORDER BY user_id`);
    return rows.map(toQuota);
  }
}

function toQuota(row: Record<string, unknown>): PrincipalQuota {
  return {
    userId: row.user_id as string,
    maxActiveTasks: (row.max_active_tasks as number | null) ?? null,
    submitsPerMinute: (row.submits_per_minute as number | null) ?? null,
    updatedAt: row.updated_at as Date,
  };
}
