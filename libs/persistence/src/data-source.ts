import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../../migrations';
import { ApiKeyEntity } from './entities/api-key.entity';
import { TaskEntity } from './entities/task.entity';
import { ToolsetEntity } from './entities/toolset.entity';
import { WorkerEntity } from './entities/worker.entity';

export const ENTITIES = [TaskEntity, WorkerEntity, ToolsetEntity, ApiKeyEntity];
export const MIGRATIONS_TABLE = 'schema_migrations';

/** Options shared by the apps, the migrator and the tests. `synchronize` is always off. */
export function dataSourceOptions(
  url: string,
  poolSize = 10,
  appName = 'mcp-task-gateway',
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: MIGRATIONS_TABLE,
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: appName,
    extra: { max: poolSize, connectionTimeoutMillis: 10000 },
  };
}

export function createDataSource(url: string, poolSize = 10, appName?: string): DataSource {
  return new DataSource(dataSourceOptions(url, poolSize, appName));
}
