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
    // jit=off: with many rows due, the planner's cost estimate for the claim crossed the JIT
    // threshold and compiling took 97 of 243 ms per claim (docs/benchmarks.md); short OLTP
    // statements never win back JIT's compile time.
    extra: { max: poolSize, connectionTimeoutMillis: 10000, options: '-c jit=off' },
  };
}

export function createDataSource(url: string, poolSize = 10, appName?: string): DataSource {
  return new DataSource(dataSourceOptions(url, poolSize, appName));
}
