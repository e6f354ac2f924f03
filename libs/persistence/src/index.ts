export { TaskEntity } from './entities/task.entity';
export { WorkerEntity } from './entities/worker.entity';
export { ToolsetEntity } from './entities/toolset.entity';
export { ApiKeyEntity } from './entities/api-key.entity';
export { ENTITIES, MIGRATIONS_TABLE, dataSourceOptions, createDataSource } from './data-source';
export { Database, jsonParam } from './database';
export type { Queryable } from './database';
export { runMigrations, missingMigrations, assertSchemaCurrent } from './migrator';
export type {
  BatchOutcome,
  ClaimRequest,
  ClaimedTask,
  RemoteHandle,
  RenewalOutcome,
  TaskLease,
  WriteOutcome,
} from './claimed-task';
export { TaskLeaseRepository } from './task-lease.repository';
export { TaskInputRepository } from './task-input.repository';
export { TaskRepository } from './task.repository';
export type {
  NewTask,
  CreateResult,
  StatusFilter,
  CancelResult,
  QuotaName,
  StoreResult,
  SubmitQuota,
} from './task.repository';
export type { StoredAnswer, TaskRow } from './task-row';
export { toTaskRow } from './task-row';
export { WorkerRepository } from './worker.repository';
export type { WorkerInfo } from './worker.repository';
export { CatalogRepository } from './catalog.repository';
export { REMOVED_TOOLSET_REASON } from './catalog.repository';
export type { CatalogEntry, PublishedToolset, SweptToolset } from './catalog.repository';
export { PersistenceModule } from './persistence.module';
export type { PersistenceOptions } from './persistence.module';
export { ApiKeyRepository, API_KEY_PREFIX, hashApiKey, newApiKey } from './api-key.repository';
export type { ApiKeyInfo, ApiKeyOwner } from './api-key.repository';
export { listTaskPage } from './task.repository';
export type { TaskPage, TaskPagePosition, TaskPageQuery } from './task.repository';
export { FleetRepository } from './fleet.repository';
export type { BacklogSampleRow } from './fleet.repository';
export { EventRepository, STREAM_START, toTaskEventRow } from './event.repository';
export type { EventCursor, TaskEventRow, ThreadEventPage } from './event.repository';
export { WebhookRepository } from './webhook.repository';
export type {
  AttemptRecord,
  ClaimedDelivery,
  NewWebhookSubscription,
  WebhookAttemptRow,
  WebhookSubscriptionRow,
} from './webhook.repository';
export { ChannelListener } from './channel.listener';
export type { ChannelListenerOptions } from './channel.listener';
export { OperatorRepository } from './operator.repository';
export type {
  DeadDeliveryRow,
  OperatorActionKind,
  OperatorActionRow,
  OperatorActor,
  OperatorOutcome,
  OperatorResult,
  StuckQuery,
  StuckTaskRow,
} from './operator.repository';
export { QuotaRepository } from './quota.repository';
export type { PrincipalQuota, QuotaChange } from './quota.repository';
export { TaskDeadlineRepository } from './task-deadline.repository';
export type { OverdueTask } from './task-deadline.repository';
