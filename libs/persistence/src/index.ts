export { Database } from './database';
export { isDatabaseError, isDatabaseUnavailable } from './database-errors';
export type { Queryable } from './database';
export { retryWhileUnavailable, waitForDatabase, type DatabaseWaitLog } from './database-wait';
export { migrateDatabase, missingMigrations, assertSchemaCurrent } from './migrator';
export type { ClaimRequest, ClaimedTask, TaskLease, WriteOutcome } from './claimed-task';
export { TaskLeaseRepository } from './task-lease.repository';
export type { ClaimOutcome } from './task-claim';
export { TaskInputRepository } from './task-input.repository';
export { TaskRepository } from './task.repository';
export type { CreateResult, NewTask, StatusFilter, QuotaName, SubmitQuota } from './task.types';
export type { TaskRow } from './task-row';
export { TASK_COLUMNS, taskColumnName, toTaskRow } from './task-row';
export { WorkerRepository } from './worker.repository';
export { CatalogRepository } from './catalog.repository';
export type { CatalogEntry } from './catalog.repository';
export { PersistenceModule } from './persistence.module';
export { ApiKeyRepository, API_KEY_PREFIX, hashApiKey } from './api-key.repository';
export type { ApiKeyInfo, ApiKeyOwner } from './api-key.repository';
export { listTaskPage } from './task-page.query';
export type { TaskPagePosition, TaskPageQuery } from './task-page.query';
export type { ThreadSummaryRow } from './task.repository';
export { FleetRepository } from './fleet.repository';
export { TaskWakeRepository } from './task-wake.repository';
export { EventRepository, STREAM_START } from './event.repository';
export type { EventCursor, TaskEventRow } from './event.repository';
export { WebhookRepository } from './webhook.repository';
export type { AttemptRecord, ClaimedDelivery, WebhookSubscriptionRow } from './webhook.repository';
export {
  API_KEY_REVOKED_CHANNEL,
  CHANNELS,
  TASK_EVENTS_CHANNEL,
  TASKS_DUE_CHANNEL,
  WEBHOOKS_DUE_CHANNEL,
} from './channels';
export type { Channel } from './channels';
export { ListenConnection } from './listen-connection';
export type { ChannelSubscriber } from './listen-connection';
export { OperatorRepository } from './operator.repository';
export type {
  DeadDeliveryRow,
  OperatorActionRow,
  OperatorActor,
  OperatorResult,
  StuckTaskRow,
} from './operator.repository';
export { QuotaRepository } from './quota.repository';
export type { PrincipalQuota, QuotaChange } from './quota.repository';
export { TaskDeadlineRepository } from './task-deadline.repository';
export { ConsoleSessionRepository } from './console-session.repository';
/** The claim's SQL text, for the schema test's plan check. */
export { CLAIM_SQL } from './sql/claim.sql';
