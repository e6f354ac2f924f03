import { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';

/** What the SQL repositories need: rows back from a statement. Satisfied by a pool or a client. */
export interface Queryable {
  query<R extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    name?: string,
  ): Promise<R[]>;
}

/**
 * The hot path's handle on Postgres: the pg pool that TypeORM already owns, used directly so
 * hand-written SQL returns plain rows (TypeORM's `query` returns `[rows, count]` for UPDATE) and
 * can use named prepared statements.
 */
export class Database implements Queryable {
  constructor(readonly pool: Pool) {}

  static fromDataSource(dataSource: DataSource): Database {
    return new Database((dataSource.driver as unknown as { master: Pool }).master);
  }

  async query<R extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    name?: string,
  ): Promise<R[]> {
    const result = await this.pool.query<R>(
      name ? { name, text: sql, values: params } : { text: sql, values: params },
    );
    return result.rows;
  }

  /** Runs `fn` in one transaction on one connection; rolls back on any error. */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(clientQueryable(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

function clientQueryable(client: PoolClient): Queryable {
  return {
    async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], name?: string) {
      const result = await client.query<R>(
        name ? { name, text: sql, values: params } : { text: sql, values: params },
      );
      return result.rows;
    },
  };
}

/** JSON for a jsonb parameter: pg would send a JS array as a Postgres array, so always stringify. */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
