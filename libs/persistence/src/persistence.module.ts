import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { ApiKeyRepository } from './api-key.repository';
import { CatalogRepository } from './catalog.repository';
import { ConsoleSessionRepository } from './console-session.repository';
import { Database, DatabaseOptions } from './database';
import { EventRepository } from './event.repository';
import { FleetRepository } from './fleet.repository';
import { ListenConnection } from './listen-connection';
import { TaskWakeRepository } from './task-wake.repository';
import { OperatorRepository } from './operator.repository';
import { QuotaRepository } from './quota.repository';
import { TaskDeadlineRepository } from './task-deadline.repository';
import { TaskInputRepository } from './task-input.repository';
import { TaskLeaseRepository } from './task-lease.repository';
import { TaskRepository } from './task.repository';
import { WebhookRepository } from './webhook.repository';
import { WorkerRepository } from './worker.repository';
import { WriteBatchOptions } from './write-batcher';

export interface PersistenceOptions extends DatabaseOptions {
  /**
   * Group commit of the lease writes (docs/leases.md, "Group commit"), fixed when
   * `TaskLeaseRepository` is built: the poller's window; absent or 0, every write alone.
   */
  writeBatch?: WriteBatchOptions;
}

/**
 * Every repository, each provided once here on the one pool: an app injects the ones it uses.
 * They hold nothing but the pool, so one an app never injects costs nothing. TaskLeaseRepository
 * is provided beside them: it is built with the app's group-commit window.
 */
const REPOSITORIES = [
  TaskRepository,
  TaskInputRepository,
  TaskDeadlineRepository,
  WorkerRepository,
  CatalogRepository,
  FleetRepository,
  TaskWakeRepository,
  EventRepository,
  WebhookRepository,
  ApiKeyRepository,
  OperatorRepository,
  QuotaRepository,
  ConsoleSessionRepository,
];

/**
 * Closes the LISTEN connection and the pool last, after the apps' own shutdown hooks have drained
 * their work (their listeners have unsubscribed by then; this ends it whatever is left).
 */
@Injectable()
class PoolCloser implements OnApplicationShutdown {
  constructor(
    @Inject(Database) private readonly db: Database,
    @Inject(ListenConnection) private readonly listen: ListenConnection,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.listen.close();
    await this.db.close();
  }
}

/**
 * The database for a Nest app: one pool, the repositories, and the one LISTEN connection its
 * listeners share (`<appName>-listen`, opened by the first subscriber). Building it opens no
 * connection: the schema check is the start's wait (waitForDatabase, run by each app's main
 * before Nest), so a database lost while the app is built is met by the app's own retries, not by
 * a failed start (docs/operations.md, "Starting before the database").
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
          useFactory: () => Database.connect(options),
        },
        ...REPOSITORIES.map((repository) => ({
          provide: repository,
          inject: [Database],
          useFactory: (db: Database) => new repository(db),
        })),
        {
          provide: TaskLeaseRepository,
          inject: [Database],
          useFactory: (db: Database) => new TaskLeaseRepository(db, options.writeBatch),
        },
        {
          provide: ListenConnection,
          useFactory: () =>
            new ListenConnection({
              url: options.url,
              appName: `${options.appName}-listen`,
              connectTimeoutMs: options.connectTimeoutMs,
              statementTimeoutMs: options.statementTimeoutMs,
            }),
        },
        PoolCloser,
      ],
      exports: [Database, TaskLeaseRepository, ListenConnection, ...REPOSITORIES],
    };
  }
}
