import type { DataSource, DataSourceOptions, MigrationInterface } from 'typeorm';
import { poolConfig } from './database';

export const MIGRATIONS_TABLE = 'schema_migrations';

/**
 * The migration classes a build applies, in order. The caller passes them (the root
 * `migrations/` index): a library does not reach outside `libs/`.
 */
export type MigrationList = readonly (new () => MigrationInterface)[];

/**
 * TypeORM runs the migrations (migrator.ts) and nothing else: no entities, `synchronize` off.
 * The apps query through {@link Database}'s own pool.
 */
export function dataSourceOptions(
  url: string,
  migrations: MigrationList,
  poolSize = 10,
  appName = 'mcp-task-gateway',
): DataSourceOptions {
  // Not the statement bounds (query_timeout, statement_timeout): a migration may rightly run
  // long, and the migrator's advisory lock waits as long as another migrator runs.
  const { max, connectionTimeoutMillis, options } = poolConfig({ url, poolSize, appName });
  return {
    type: 'postgres',
    url,
    entities: [],
    migrations: [...migrations],
    migrationsTableName: MIGRATIONS_TABLE,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: appName,
    extra: { max, connectionTimeoutMillis, options },
  };
}

/**
 * TypeORM is loaded here, when a migrator is made (the CLI, `npm start`, the tests' template),
 * not when the library is: it is about 350 modules, a sixth of what an API or poller process
 * would otherwise load at each start only to compare migration names (migrator.ts).
 */
export function createDataSource(
  url: string,
  migrations: MigrationList,
  poolSize = 10,
  appName?: string,
): DataSource {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const typeorm = require('typeorm') as typeof import('typeorm');
  return new typeorm.DataSource(dataSourceOptions(url, migrations, poolSize, appName));
}
