import { createHash } from 'node:crypto';
import type { TaskEventRow } from '@app/persistence';
import { TaskSummaryView, taskRowFromSnapshot, toTaskSummary } from './task.projection';

/** The event types of events.md ("The event"); SSE and webhooks share them. */
export const EVENT_TYPES = [
  'task.working',
  'task.input_required',
  'task.progress',
  'task.completed',
  'task.failed',
  'task.cancelled',
] as const;
/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The task summary inside an event: exactly the API's list summary. */
export type EventTaskSummary = TaskSummaryView;

/** One event as webhooks and SSE show it (events.md, "The event"). */
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

/** Prefix of the public event ID. */
export const EVENT_ID_PREFIX = 'evt_';

/**
 * The public ID of an event: `evt_` + 22 base64url characters of SHA-256 over the task's ID and
 * the event's per-task sequence. Stable (a redelivery carries the same `webhook-id`), unique
 * (one event per task and sequence), computed from the row alone (no key to share between API
 * replicas and pollers), and it says nothing about the outbox's global counters, which the row's
 * own ID would (how many events the whole gateway wrote, and when).
 */
export function publicEventId(taskId: string, sequence: number): string {
  const digest = createHash('sha256').update(`${taskId}:${sequence}`).digest('base64url');
  return EVENT_ID_PREFIX + digest.slice(0, 22);
}

/**
 * Builds the shown event from the stored one. The task goes through the API's own whitelist
 * (`@app/views`), so a receiver never sees a field the API would not show.
 */
export function toEventView(row: TaskEventRow, ctx: EventProjectionContext): TaskEventView {
  return {
    id: publicEventId(row.taskId, row.sequence),
    type: row.type as EventType,
    created_at: row.createdAt.toISOString(),
    sequence: row.sequence,
    task: toTaskSummary(taskRowFromSnapshot(row.task), ctx),
    data: eventData(row),
  };
}

/** `data` by type: the status left, or the progress reported. Nothing else is copied. */
function eventData(row: TaskEventRow): Record<string, unknown> {
  if (row.type === 'task.progress') return { progress: row.data.progress ?? null };
  return { previous_status: row.data.previous_status ?? null };
}
