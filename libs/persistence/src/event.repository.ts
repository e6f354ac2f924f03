import { Queryable } from './database';
import {
  DELETE_EXPIRED_EVENTS_SQL,
  THREAD_EVENTS_SQL,
  USER_EVENTS_SQL,
} from './sql/thread-events.sql';

/**
 * A stored event. `task` holds the task's shown columns as they were when the event was
 * written (snake_case, as in `tasks`); it is projected through a whitelist before it is shown.
 */
export interface TaskEventRow {
  /** Decimal bigserial, as text (a JS number would lose precision past 2^53). */
  id: string;
  /** The writing transaction (xid8, as text); part of the stream position. */
  tx: string;
  taskId: string;
  userId: string;
  threadId: string;
  sequence: number;
  type: string;
  task: Record<string, unknown>;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** A position in a thread's event stream: after the event `id` of transaction `tx`. */
export interface EventCursor {
  tx: string;
  id: string;
}

/** The start of every stream. */
export const STREAM_START: EventCursor = { tx: '0', id: '0' };

/** A page of the stream: final events to emit, and whether newer ones are still settling. */
export interface ThreadEventPage {
  events: TaskEventRow[];
  /** Committed events exist past the page that are not final yet: look again shortly. */
  unsettled: boolean;
}

/** Reads the event outbox (the triggers of migration Events write it) and expires it. */
export class EventRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * The thread's final events after `after`, in stream order, at most `limit`; with `threadId`
   * undefined, those of every thread of the user.
   */
  async threadEvents(
    userId: string,
    threadId: string | undefined,
    after: EventCursor,
    limit: number,
  ): Promise<ThreadEventPage> {
    const rows =
      threadId === undefined
        ? await this.db.query(
            USER_EVENTS_SQL,
            [userId, after.tx, after.id, limit],
            'mcp_tasks_user_events',
          )
        : await this.db.query(
            THREAD_EVENTS_SQL,
            [userId, threadId, after.tx, after.id, limit],
            'mcp_tasks_thread_events',
          );
    const events: TaskEventRow[] = [];
    for (const row of rows) {
      if (row.settled !== true) return { events, unsettled: true };
      events.push(toTaskEventRow(row));
    }
    return { events, unsettled: false };
  }

  /**
   * The stream position of one of the thread's events (of any thread of the user with
   * `threadId` undefined), named by its task and per-task sequence (what a client's
   * Last-Event-ID carries); null when no such event is retained.
   */
  async positionOf(
    userId: string,
    threadId: string | undefined,
    taskId: string,
    sequence: number,
  ): Promise<EventCursor | null> {
    const rows = await this.db.query(
      `SELECT tx::text AS tx, id::text AS id FROM task_events
        WHERE user_id = $1 AND ($2::text IS NULL OR thread_id = $2) AND task_id = $3
          AND sequence = $4`,
      [userId, threadId ?? null, taskId, sequence],
    );
    return rows.length > 0 ? { tx: String(rows[0].tx), id: String(rows[0].id) } : null;
  }

  /**
   * The thread's newest final event (its position, task and sequence), so a stream can start
   * "from now" without replaying the retained log; null when the thread has none. Only settled
   * events count: one still committing sorts after this position and is streamed.
   */
  async threadEnd(
    userId: string,
    threadId: string,
  ): Promise<{ cursor: EventCursor; taskId: string; sequence: number } | null> {
    const rows = await this.db.query(
      `SELECT tx::text AS tx, id::text AS id, task_id, sequence FROM task_events
        WHERE user_id = $1 AND thread_id = $2 AND tx < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY tx DESC, id DESC LIMIT 1`,
      [userId, threadId],
    );
    if (rows.length === 0) return null;
    return {
      cursor: { tx: String(rows[0].tx), id: String(rows[0].id) },
      taskId: rows[0].task_id as string,
      sequence: rows[0].sequence as number,
    };
  }

  /** Deletes up to `batchSize` events older than `hours`; returns how many. */
  async deleteExpiredBatch(hours: number, batchSize: number): Promise<number> {
    const rows = await this.db.query(DELETE_EXPIRED_EVENTS_SQL, [hours, batchSize]);
    return rows.length;
  }
}

/** Maps a `task_events` row (with `id` and `tx` selected as text) to a {@link TaskEventRow}. */
export function toTaskEventRow(row: Record<string, unknown>): TaskEventRow {
  return {
    id: String(row.id),
    tx: String(row.tx),
    taskId: row.task_id as string,
    userId: row.user_id as string,
    threadId: row.thread_id as string,
    sequence: row.sequence as number,
    type: row.type as string,
    task: row.task as Record<string, unknown>,
    data: row.data as Record<string, unknown>,
    createdAt: row.created_at as Date,
  };
}
