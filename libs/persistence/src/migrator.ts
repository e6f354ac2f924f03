import type { DataSource } from 'typeorm';
import { createDataSource, MigrationList, MIGRATIONS_TABLE } from './data-source';
import { Queryable } from './database';

/** Any constant works; it only has to be the same for every migrator of this schema. */
const MIGRATION_LOCK_KEY = 727_001;

/**
 * Applies pending migrations while holding a session advisory lock, so two migrators (a Job
 * and a developer, two test files) never interleave. Returns the names it applied.
 */
async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((migration) => migration.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await runner.release();
  }
}

/**
 * Applies `migrations` to the database at `url` over TypeORM's own connection (`appName` labels
 * it), closed after; returns the names it applied. `npm run migrate`, `npm start`, the tests and
 * the benchmarks all migrate this way.
 */
export async function migrateDatabase(
  url: string,
  migrations: MigrationList,
  appName: string,
): Promise<string[]> {
  const dataSource = createDataSource(url, migrations, 2, appName);
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** Names of `migrations` (those this build needs) that the database has not applied. */
export async function missingMigrations(
  db: Queryable,
  migrations: MigrationList,
): Promise<string[]> {
  const exists = await db.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
    MIGRATIONS_TABLE,
  ]);
  const applied = new Set<string>();
  if (exists[0]?.ok) {
    const rows = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
    for (const row of rows) applied.add(row.name);
  }
  return migrations
    .map((migration) => new migration().name ?? migration.name)
    .filter((name) => !applied.has(name));
}

/** Throws, naming each missing migration, when the schema is older than `migrations` need. */
export async function assertSchemaCurrent(db: Queryable, migrations: MigrationList): Promise<void> {
  const missing = await missingMigrations(db, migrations);
  if (missing.length > 0) {
    throw new Error(
      `database schema is missing migration(s): ${missing.join(', ')}; run "npm run migrate" first`,
    );
  }
}
