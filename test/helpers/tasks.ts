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

/** Inserts `count` tasks in one statement and returns their IDs, in insertion order. */
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
                        error_code, completed_at, next_attempt_at)
     SELECT id, $2, $3, $4, $5, $6, $7, '{}'::jsonb,
            CASE WHEN $7 = 'failed' THEN 'upstream_failed' END,
            CASE WHEN $8 THEN now() END,
            CASE WHEN $8 THEN NULL ELSE now() + make_interval(secs => $9::float8 / 1000) END
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
      seed.dueInMs ?? 0,
    ],
  );
  return ids;
}
