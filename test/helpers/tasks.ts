import { newTaskId } from '@app/common';
import { Queryable } from '@app/persistence';

export interface TaskSeed {
  status?: string;
  toolset?: string;
  contract?: string;
  server?: string;
  userId?: string;
  threadId?: string;
  /** Milliseconds from now (database clock) until due; default: due now. */
  dueInMs?: number;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * Inserts `count` tasks in one statement and returns their IDs, in insertion order. An active
 * task's lease row comes from the `tasks_lease_insert` trigger, due now; another due time is set
 * on it afterwards.
 */
export async function insertTasks(
  db: Queryable,
  count: number,
  seed: TaskSeed = {},
): Promise<string[]> {
  const status = seed.status ?? 'queued';
  const ids = Array.from({ length: count }, () => newTaskId());
  const terminal = TERMINAL.has(status);
  await db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                        error_code, completed_at)
     SELECT id, $2, $3, $4, $5, $6, $7, '{}'::jsonb,
            CASE WHEN $7 = 'failed' THEN 'upstream_failed' END,
            CASE WHEN $8 THEN now() END
       FROM unnest($1::text[]) AS id`,
    [
      ids,
      seed.userId ?? 'user-1',
      seed.threadId ?? 'thread-1',
      seed.toolset ?? 'demo-ordinary',
      seed.contract ?? 'ordinary',
      seed.server ?? 'demo',
      status,
      terminal,
    ],
  );
  if (!terminal && seed.dueInMs) await setLeaseRows(db, ids, { dueInMs: seed.dueInMs });
  return ids;
}

/** What a test sets on tasks' lease rows (docs/leases.md, "The lease table"). */
export interface LeaseState {
  /** Due this many milliseconds from now (database clock); negative: overdue. */
  dueInMs?: number;
  /** A lease held by `owner` (a fresh token), ending this many milliseconds from now. */
  leased?: { owner: string; expiresInMs: number };
  /** No lease held. */
  released?: boolean;
}

/** Sets due times and leases on the lease rows of `ids` (active tasks), as a poller would. */
export async function setLeaseRows(db: Queryable, ids: string[], state: LeaseState): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [ids];
  if (state.dueInMs !== undefined) {
    params.push(state.dueInMs);
    sets.push(`next_attempt_at = now() + make_interval(secs => $${params.length}::float8 / 1000)`);
  }
  if (state.leased) {
    params.push(state.leased.owner, state.leased.expiresInMs);
    const end = `now() + make_interval(secs => $${params.length}::float8 / 1000)`;
    sets.push(
      `lease_owner = $${params.length - 1}, lease_token = gen_random_uuid(), lease_expires_at = ${end}`,
      `next_attempt_at = ${end}`,
    );
  }
  if (state.released) sets.push('lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL');
  if (sets.length === 0) return;
  await db.query(
    `UPDATE task_leases SET ${sets.join(', ')} WHERE task_id = ANY($1::text[])`,
    params,
  );
}
