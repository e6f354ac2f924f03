import { newTaskId } from '@app/common';
import { Queryable } from '@app/persistence';

/**
 * Inserts one task row with any columns set, as pollers would leave it: for API tests that
 * need a task in a given state without running a poller. Returns the task ID.
 */
export async function insertTaskRow(
  db: Queryable,
  columns: Record<string, unknown> = {},
): Promise<string> {
  const status = (columns.status as string | undefined) ?? 'queued';
  const terminal = ['completed', 'failed', 'cancelled'].includes(status);
  const row: Record<string, unknown> = {
    id: newTaskId(),
    user_id: 'alice',
    thread_id: 'thread-1',
    toolset: 'report',
    contract: 'ordinary',
    server: 'srv-internal-x7q',
    status,
    input: '{}',
    next_attempt_at: terminal ? null : new Date(),
    completed_at: terminal ? new Date() : null,
    ...columns,
  };
  const names = Object.keys(row);
  await db.query(
    `INSERT INTO tasks (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    names.map((n) => row[n]),
  );
  return row.id as string;
}
