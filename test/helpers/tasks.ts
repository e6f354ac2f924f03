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
  if (!terminal && seed.dueInMs) await setDueIn(db, ids, seed.dueInMs);
  return ids;
}

/**
 * Makes the active tasks `ids` due `dueInMs` from now (database clock; negative: overdue), on
 * their lease rows (docs/leases.md, "The lease table"), as a poller's release would.
 */
export async function setDueIn(db: Queryable, ids: string[], dueInMs: number): Promise<void> {
  await db.query(
    `UPDATE task_leases SET next_attempt_at = now() + make_interval(secs => $2::float8 / 1000)
      WHERE task_id = ANY($1::text[])`,
    [ids, dueInMs],
  );
}

/**
 * Sets the lease rows of `ids` due from `dueInMs` from now on (database clock), a millisecond
 * apart in the order given, so that due order (and a fair claim's rank within a principal) is
 * exactly that order.
 */
export async function dueInOrder(db: Queryable, ids: string[], dueInMs: number): Promise<void> {
  await db.query(
    `UPDATE task_leases
        SET next_attempt_at = now() + make_interval(secs => ($2::int + n) / 1000.0)
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n)
      WHERE task_id = u.id`,
    [ids, dueInMs],
  );
}

/**
 * Leases `ids` to `owner` as a claim leases them (claim.sql.ts, LEASE_AND_RETURN): a live lease
 * of a minute. Run inside an open transaction, the rows stay locked until it ends, as a
 * concurrent claim's statement holds them.
 */
export async function leaseLive(db: Queryable, ids: string[], owner: string): Promise<void> {
  await db.query(
    `UPDATE task_leases
        SET lease_owner = $2, lease_token = gen_random_uuid(),
            lease_expires_at = now() + interval '1 minute', next_attempt_at = now() + interval '1 minute'
      WHERE task_id = ANY($1::text[])`,
    [ids, owner],
  );
}
