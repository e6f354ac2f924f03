import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { Database, createDataSource, runMigrations } from '@app/persistence';

export interface BenchDatabase {
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh `bench_<label>_<random>` database with the gateway schema (migrated), dropped by
 * `drop()`. Each benchmark owns its database so runs never see each other's rows.
 */
export async function createBenchDatabase(
  adminUrl: string,
  label: string,
  poolSize = 4,
): Promise<BenchDatabase> {
  const name = `bench_${label}_${randomBytes(4).toString('hex')}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(adminUrl, name);
  const dataSource = createDataSource(url, 2, 'bench-migrate');
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
  // jit=off as on the apps' connections (libs/persistence/src/data-source.ts).
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    application_name: 'bench',
    options: '-c jit=off',
  });
  return {
    url,
    db: new Database(pool),
    async drop() {
      await pool.end();
      await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}
