import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { poolConfig } from './database';

export const MIGRATIONS_TABLE = 'schema_migrations';

/**
 * TypeORM runs the migrations (migrator.ts) and nothing else: no entities, `synchronize` off.
 * The apps query through {@link Database}'s own pool.
 */
export function dataSourceOptions(
  url: string,
  poolSize = 10,
  appName = 'mcp-task-gateway',
): DataSourceOptions {
  const { max, connectionTimeoutMillis, options } = poolConfig({ url, poolSize, appName });
  return {
    type: 'postgres',
    url,
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: appName,
    extra: { max, connectionTimeoutMillis, options },
  };
}

export function createDataSource(url: string, poolSize = 10, appName?: string): DataSource {
  return new DataSource(dataSourceOptions(url, poolSize, appName));
}
