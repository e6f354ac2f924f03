import { TaskStatus, isTerminal, isRecord } from '@app/common';
import { TaskRow, toTaskRow } from '@app/persistence';
import { consumerError, consumerLastError } from './error-text.projection';

/** A task's error as shown: a machine-readable code and a bounded message. */
export interface TaskErrorView {
  code: string;
  message: string;
}

/** The summary shown in lists (and events): everything but the result and the question. */
export interface TaskSummaryView {
  task_id: string;
  thread_id: string;
  toolset: string;
  status: TaskStatus;
  created_at: string;
  updated_at: string;
  submitted_at: string | null;
  completed_at: string | null;
  next_check_at: string | null;
  cancel_requested: boolean;
  tracking_degraded: boolean;
  progress: unknown;
  error: TaskErrorView | null;
  last_error: string | null;
  metadata: Record<string, unknown> | null;
}

/** One task in detail. */
export interface TaskView extends TaskSummaryView {
  result: unknown;
  result_preview: string | null;
  result_truncated: boolean;
  result_artifact: unknown;
  input_required: InputRequiredView | null;
  /** The failed task this one retries; null for a task submitted afresh. */
  retry_of: string | null;
}

/** What the projection needs besides the row. */
export interface ProjectionContext {
  /** TRACKING_DEGRADED_AFTER: consecutive poll errors from which tracking is shown degraded. */
  trackingDegradedAfter: number;
  /**
   * Why the task's toolset is unavailable now, if it is; only whether it is set matters (a queued
   * task says it waits), the reason itself is operator text and is never shown on a task.
   */
  unavailableReason?: string | null;
}

/**
 * The summary of a task, built field by field from the row. This whitelist is the only way a
 * task leaves the API: a new column (a remote ID, a lease, a worker) stays internal until it is
 * added here on purpose.
 */
export function toTaskSummary(row: TaskRow, ctx: ProjectionContext): TaskSummaryView {
  return {
    task_id: row.id,
    thread_id: row.threadId,
    toolset: row.toolset,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    submitted_at: iso(row.submittedAt),
    completed_at: iso(row.completedAt),
    next_check_at: isTerminal(row.status) ? null : iso(row.nextAttemptAt),
    cancel_requested: row.cancelRequestedAt !== null,
    tracking_degraded: row.consecutiveErrors >= ctx.trackingDegradedAfter,
    progress: row.progress ?? null,
    error: consumerError(row),
    last_error: consumerLastError(row, ctx.unavailableReason != null),
    metadata: row.metadata ?? null,
  };
}

/** The task in detail: the summary plus the result and any question for the caller. */
export function toTaskView(row: TaskRow, ctx: ProjectionContext): TaskView {
  return {
    ...toTaskSummary(row, ctx),
    result: row.result ?? null,
    result_preview: row.resultPreview,
    result_truncated: row.resultTruncated,
    result_artifact: row.resultArtifact ?? null,
    input_required: inputRequiredView(row),
    retry_of: row.retryOf,
  };
}

/** The one shape of a task's questions (docs/contracts.md, "Questions"). */
export interface InputRequiredView {
  requests: Record<string, { method: string; params: Record<string, unknown> }>;
}

/**
 * The questions still open: the stored requests without the keys already answered through the
 * API (their answers may not have reached the upstream yet, but they need nothing more from the
 * consumer). Null unless the task is `input_required`.
 */
export function inputRequiredView(row: TaskRow): InputRequiredView | null {
  if (row.status !== TaskStatus.InputRequired) return null;
  const requests = storedRequests(row);
  if (!requests) return null;
  const answered = row.inputResponses ?? {};
  return {
    requests: Object.fromEntries(Object.entries(requests).filter(([key]) => !(key in answered))),
  };
}

/** False when the task's upstream cannot take answers through the gateway. */
export function acceptsAnswers(row: TaskRow): boolean {
  const stored = row.inputRequired as { answerable?: unknown } | null;
  return storedRequests(row) !== null && stored?.answerable !== false;
}

function storedRequests(row: TaskRow): InputRequiredView['requests'] | null {
  const stored = row.inputRequired as { requests?: unknown } | null;
  const requests = stored?.requests;
  return isRecord(requests) ? (requests as InputRequiredView['requests']) : null;
}

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

/**
 * A task row from a stored jsonb snapshot of its columns (the event outbox keeps one per event;
 * `toTaskRow` reads its ISO times as Dates). The result goes through the same whitelist as a
 * live row, so an event can never show more than the API does.
 */
export function taskRowFromSnapshot(snapshot: Record<string, unknown>): TaskRow {
  return toTaskRow(snapshot);
}
