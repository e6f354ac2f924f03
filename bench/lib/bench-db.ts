import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { adminQuery, ownedDatabase, withDatabase } from '../../test/helpers/db';

export interface BenchDatabase {
  url: string;
  db: Database;
  drop(): Promise<void>;
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
  await migrateDatabase(url, MIGRATIONS, 'bench-migrate');
  // jit=off as on the apps' connections (SESSION_OPTIONS, libs/persistence/src/database.ts).
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    application_name: 'bench',
    options: '-c jit=off',
  });
  // drop() ends the pool, then drops the database WITH (FORCE): a client whose socket had not
  // closed yet is terminated ("terminating connection due to administrator command"), an idle
  // client's error is a pool 'error' event, and one without a listener ended the whole bench run.
  // A statement's own errors still reach the statement.
  pool.on('error', () => undefined);
  return ownedDatabase(adminUrl, name, pool);
}
