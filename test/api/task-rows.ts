import { newTaskId } from '@app/common';
import { Queryable } from '@app/persistence';

/** The lease row's columns (docs/leases.md, "The lease table"); the rest are the task's. */
const LEASE_COLUMNS = ['next_attempt_at', 'lease_owner', 'lease_token', 'lease_expires_at'];

/**
 * Inserts one task row with any columns set, as pollers would leave it: for API tests that
 * need a task in a given state without running a poller. Lease columns go to the task's lease
 * row (made, due now, by the insert's trigger when the task is active). Returns the task ID.
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
    completed_at: terminal ? new Date() : null,
    ...columns,
  };
  const lease = LEASE_COLUMNS.filter((n) => n in row && !terminal);
  const names = Object.keys(row).filter((n) => !LEASE_COLUMNS.includes(n));
  await db.query(
    `INSERT INTO tasks (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
    names.map((n) => row[n]),
  );
  if (lease.length > 0) {
    await db.query(
      `UPDATE task_leases SET ${lease.map((n, i) => `${n} = $${i + 2}`).join(', ')} WHERE task_id = $1`,
      [row.id, ...lease.map((n) => row[n])],
    );
  }
  return row.id as string;
}
