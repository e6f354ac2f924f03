import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CatalogRepository } from './catalog.repository';
import { createDataSource } from './data-source';
import { Database } from './database';
import { assertSchemaCurrent } from './migrator';
import { TaskInputRepository } from './task-input.repository';
import { TaskLeaseRepository } from './task-lease.repository';
import { TaskRepository } from './task.repository';
import { WorkerRepository } from './worker.repository';

export interface PersistenceOptions {
  url: string;
  poolSize: number;
  appName: string;
}

/** Closes the pool last, after the apps' own shutdown hooks have drained their work. */
@Injectable()
class PoolCloser implements OnApplicationShutdown {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

/**
 * The database for a Nest app: one pool, the schema check at boot (an app refuses to start on
 * a schema older than it needs, naming the missing migration), and the repositories.
 */
@Module({})
export class PersistenceModule {
  static forRoot(options: PersistenceOptions): DynamicModule {
    return {
      module: PersistenceModule,
      global: true,
      providers: [
        {
          provide: DataSource,
          useFactory: async () => {
            const dataSource = createDataSource(options.url, options.poolSize, options.appName);
            await dataSource.initialize();
            try {
              await assertSchemaCurrent(dataSource);
            } catch (error) {
              await dataSource.destroy();
              throw error;
            }
            return dataSource;
          },
        },
        {
          provide: Database,
          inject: [DataSource],
          useFactory: (ds: DataSource) => Database.fromDataSource(ds),
        },
        {
          provide: TaskRepository,
          inject: [Database],
          useFactory: (db: Database) => new TaskRepository(db),
        },
        {
          provide: TaskLeaseRepository,
          inject: [Database],
          useFactory: (db: Database) => new TaskLeaseRepository(db),
        },
        {
          provide: TaskInputRepository,
          inject: [Database],
          useFactory: (db: Database) => new TaskInputRepository(db),
        },
        {
          provide: WorkerRepository,
          inject: [Database],
          useFactory: (db: Database) => new WorkerRepository(db),
        },
        {
          provide: CatalogRepository,
          inject: [Database],
          useFactory: (db: Database) => new CatalogRepository(db),
        },
        PoolCloser,
      ],
      exports: [
        DataSource,
        Database,
        TaskRepository,
        TaskLeaseRepository,
        TaskInputRepository,
        WorkerRepository,
        CatalogRepository,
      ],
    };
  }
}
