import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { CatalogRepository } from './catalog.repository';
import { Database, DatabaseOptions } from './database';
import { assertSchemaCurrent } from './migrator';
import { TaskInputRepository } from './task-input.repository';
import { TaskLeaseRepository } from './task-lease.repository';
import { TaskRepository } from './task.repository';
import { WorkerRepository } from './worker.repository';

export type PersistenceOptions = DatabaseOptions;

/** Closes the pool last, after the apps' own shutdown hooks have drained their work. */
@Injectable()
class PoolCloser implements OnApplicationShutdown {
  constructor(@Inject(Database) private readonly db: Database) {}

  async onApplicationShutdown(): Promise<void> {
    await this.db.close();
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
          provide: Database,
          useFactory: async () => {
            const db = Database.connect(options);
            try {
              await assertSchemaCurrent(db);
            } catch (error) {
              await db.close();
              throw error;
            }
            return db;
          },
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
