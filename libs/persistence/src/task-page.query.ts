import { Queryable } from './database';
import { TaskRow, toTaskRow } from './task-row';
import { VISIBLE } from './task.repository';
import type { StatusFilter } from './task.types';

/**
 * Listing a user's tasks page by page (`GET /v1/tasks`, a thread's list, the console): the
 * filters and the keyset position, kept apart from the task repository's writes.
 */

/** A keyset position with the creation time at full (microsecond) precision, as text. */
export interface TaskPagePosition {
  /** ISO 8601 UTC with microseconds, e.g. `2025-01-01T10:00:00.123456Z`. */
  createdAt: string;
  id: string;
}

export interface TaskPageQuery {
  userId: string;
  /** Omit to list across the user's threads. */
  threadId?: string;
  status?: StatusFilter;
  /** Only this toolset's tasks. */
  toolset?: string;
  /** Created strictly after / before these instants (ISO 8601 text, compared as timestamptz). */
  createdAfter?: string;
  createdBefore?: string;
  limit: number;
  /** Keyset position: after the last row of the previous page. */
  after?: TaskPagePosition;
}

export interface TaskPage {
  rows: TaskRow[];
  /** The position after the last row, when more rows follow; undefined on the last page. */
  next?: TaskPagePosition;
}

/**
 * One page of the user's tasks, newest first, with an exact keyset position. The position keeps
 * the stored microseconds (a JS Date holds milliseconds, and a position cut to them would skip
 * rows created in the same millisecond as a page's last row), and one extra row is fetched to
 * know whether another page follows.
 */
export async function listTaskPage(db: Queryable, query: TaskPageQuery): Promise<TaskPage> {
  const params: unknown[] = [query.userId, query.limit + 1];
  const where = ['user_id = $1', VISIBLE];
  if (query.threadId !== undefined) {
    params.push(query.threadId);
    where.push(`thread_id = $${params.length}`);
  }
  if (query.status === 'active') where.push(`status IN ('queued', 'working', 'input_required')`);
  else if (query.status === 'terminal')
    where.push(`status IN ('completed', 'failed', 'cancelled')`);
  else if (query.status !== undefined) {
    params.push(query.status);
    where.push(`status = $${params.length}`);
  }
  if (query.toolset !== undefined) {
    params.push(query.toolset);
    where.push(`toolset = $${params.length}`);
  }
  if (query.createdAfter !== undefined) {
    params.push(query.createdAfter);
    where.push(`created_at > $${params.length}::timestamptz`);
  }
  if (query.createdBefore !== undefined) {
    params.push(query.createdBefore);
    where.push(`created_at < $${params.length}::timestamptz`);
  }
  if (query.after) {
    params.push(query.after.createdAt, query.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  const rows = await db.query(
    `SELECT *, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS page_at
       FROM task_rows WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $2`,
    params,
  );
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    rows: page.map(toTaskRow),
    next:
      rows.length > query.limit && last
        ? { createdAt: last.page_at as string, id: last.id as string }
        : undefined,
  };
}
