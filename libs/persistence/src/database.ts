import { Pool, PoolClient, QueryResultRow } from 'pg';
import { DataSource } from 'typeorm';
import { storableJson, storableParams } from './storable-text';

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
    const values = storableParams(params);
    const result = await this.pool.query<R>(
      name ? { name, text: sql, values } : { text: sql, values },
    );
    return result.rows;
  }

  /**
   * Runs `fn` in one transaction on one connection; rolls back on any error. While checked out,
   * a pg client has no `error` listener of the pool's, so a connection killed between two
   * statements (a Postgres restart) would be an unhandled `error` event and end the process;
   * here it fails this transaction instead, and the broken client is discarded, not reused.
   */
  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn(clientQueryable(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }
}

function clientQueryable(client: PoolClient): Queryable {
  return {
    async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], name?: string) {
      const values = storableParams(params);
      const result = await client.query<R>(
        name ? { name, text: sql, values } : { text: sql, values },
      );
      return result.rows;
    },
  };
}

/**
 * JSON for a jsonb parameter: pg would send a JS array as a Postgres array, so always stringify.
 * U+0000, which jsonb refuses, is replaced in strings and keys (storable-text.ts).
 */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : storableJson(value);
}
