import { ERROR_MESSAGE_SHOWN_CHARS, TaskStatus, cutText, isTerminal } from '@app/common';
import type { TaskEventRow } from '@app/persistence';
import { EventType } from './webhooks.enum';

/**
 * The task summary inside an event: the same fields, built by the same rules, as the API's list
 * summary (apps/api/src/tasks/task.projection.ts `toTaskSummary`). It lives here because the
 * poller signs and sends events and cannot import the API; test/events/outbox.test.ts pins the
 * two projections to the same output.
 */
export interface EventTaskSummary {
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
  error: { code: string; message: string } | null;
  last_error: string | null;
  metadata: Record<string, unknown> | null;
}

/** One event as webhooks and SSE show it (api.md, "Events"). */
export interface TaskEventView {
  id: string;
  type: EventType;
  created_at: string;
  sequence: number;
  task: EventTaskSummary;
  data: Record<string, unknown>;
}

/** What the projection needs besides the event. */
export interface EventProjectionContext {
  /** TRACKING_DEGRADED_AFTER. */
  trackingDegradedAfter: number;
}

/** Prefix of the public event ID: `evt_` + the outbox row's decimal ID. */
export const EVENT_ID_PREFIX = 'evt_';

/**
 * Builds the shown event from the stored one, field by field: the stored snapshot holds only the
 * summary's columns, and nothing reaches a receiver unless it is named here.
 */
export function toEventView(row: TaskEventRow, ctx: EventProjectionContext): TaskEventView {
  const t = row.task;
  const status = t.status as TaskStatus;
  const errorCode = (t.error_code as string | null) ?? null;
  const lastError = (t.last_error as string | null) ?? null;
  return {
    id: EVENT_ID_PREFIX + row.id,
    type: row.type as EventType,
    created_at: row.createdAt.toISOString(),
    sequence: row.sequence,
    task: {
      task_id: t.id as string,
      thread_id: t.thread_id as string,
      toolset: t.toolset as string,
      status,
      created_at: iso(t.created_at) ?? '',
      updated_at: iso(t.updated_at) ?? '',
      submitted_at: iso(t.submitted_at),
      completed_at: iso(t.completed_at),
      next_check_at: isTerminal(status) ? null : iso(t.next_attempt_at),
      cancel_requested: t.cancel_requested_at != null,
      tracking_degraded: Number(t.consecutive_errors ?? 0) >= ctx.trackingDegradedAfter,
      progress: t.progress ?? null,
      error:
        errorCode === null
          ? null
          : {
              code: errorCode,
              message: cutText((t.error_message as string | null) ?? '', ERROR_MESSAGE_SHOWN_CHARS),
            },
      last_error: lastError === null ? null : cutText(lastError, ERROR_MESSAGE_SHOWN_CHARS),
      metadata: (t.metadata as Record<string, unknown> | null) ?? null,
    },
    data: eventData(row),
  };
}

/** `data` by type: the status left, or the progress reported. Nothing else is copied. */
function eventData(row: TaskEventRow): Record<string, unknown> {
  if (row.type === 'task.progress') return { progress: row.data.progress ?? null };
  return { previous_status: row.data.previous_status ?? null };
}

/** jsonb keeps timestamps as ISO text with an offset and microseconds; shown as JS ISO (UTC). */
function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value as string).toISOString();
}
