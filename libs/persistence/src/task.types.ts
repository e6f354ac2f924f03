import { Contract, TaskStatus } from '@app/common';
import { TaskRow } from './task-row';

/** What the task repository takes and answers (task.repository.ts). */

export interface NewTask {
  userId: string;
  /** The submitter's tenant: the fair-share principal instead of the user (docs/leases.md). */
  tenant?: string | null;
  threadId: string;
  toolset: string;
  contract: Contract;
  server: string;
  input: unknown;
  metadata?: Record<string, unknown> | null;
  idempotencyKey?: string | null;
  /** A hash of the request body: the same key with another body is a conflict. */
  requestHash?: string | null;
  /** The submit's trace context (libs/tracing), when tracing is on. */
  traceContext?: object | null;
  /** The toolset's deadline: the task's `deadline_at` is the insert's time plus this. */
  deadlineSeconds?: number | null;
  /** The failed task this one retries: linked in the insert's transaction (`retry_of`). */
  retryOf?: string | null;
}

/** The two submit quotas (docs/api.md, "Quotas"). */
export type QuotaName = 'active_tasks' | 'submits_per_minute';

/** The quota defaults a submit is checked against; a `principal_quotas` row overrides each. */
export interface SubmitQuota {
  /** Tokens per minute of the user's bucket (a minute's worth may burst); 0 = unlimited. */
  submitsPerMinute: number;
  /** Tasks the user may have queued, working or waiting for input at once; 0 = unlimited. */
  maxActiveTasks: number;
  /** What a refusal on `active_tasks` tells the client to wait: no task's end is predictable. */
  activeRetryAfterSeconds: number;
}

/** What storing a task did, when no quota can refuse it. */
export type StoreResult =
  | { kind: 'created'; task: TaskRow }
  | { kind: 'replayed'; task: TaskRow }
  | { kind: 'conflict'; task: TaskRow };

export type CreateResult =
  StoreResult | { kind: 'refused'; quota: QuotaName; limit: number; retryAfterSeconds: number };

/** What {@link TaskRepository.createIfCatalogUnchanged} did: as `create`, or nothing (`stale`). */
export type GuardedCreateResult = CreateResult | { kind: 'stale' };

export type StatusFilter = 'active' | 'terminal' | TaskStatus;

export type CancelResult =
  { kind: 'not_found' } | { kind: 'terminal'; task: TaskRow } | { kind: 'accepted'; task: TaskRow };
