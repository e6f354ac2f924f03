import { Database } from '@app/persistence';

export interface LoadSpec {
  count: number;
  status: 'queued' | 'working' | 'completed';
  /** The task's input (the submit tool's arguments); default `{}`. */
  input?: Record<string, unknown>;
  /** For `working` rows that no upstream knows: a remote ID that polls will not find. */
  remoteTaskId?: string;
  /** Due time for active rows: now + a spread in [fromMs, toMs) (database clock). */
  dueFromMs?: number;
  dueToMs?: number;
  /** Distinct users the rows are spread over (the listing indexes see realistic keys). */
  users?: number;
}

/**
 * Bulk-loads benchmark rows in one statement with generate_series. IDs are random like
 * `newTaskId()` (task_ + 26 base32-ish chars), so primary-key inserts land all over the index as
 * in production. The triggers are skipped for the load (session_replication_role): a million
 * notifications in one transaction measure nothing the benchmarks are about. So the statement
 * writes the active rows' lease rows itself (docs/leases.md, "The lease table"), with their due
 * times.
 */
export async function loadTasks(db: Database, spec: LoadSpec): Promise<void> {
  const terminal = spec.status === 'completed';
  await db.transaction(async (tx) => {
    await tx.query(`SET LOCAL session_replication_role = replica`);
    await tx.query(
      `WITH src AS (
         SELECT g, 'task_' || substr(md5(random()::text || g::text), 1, 26) AS id,
                'user-' || (g % $2) AS user_id,
                now() + make_interval(secs => ($5::float8 + random() * ($6::float8 - $5::float8)) / 1000)
                  AS due
           FROM generate_series(1, $1::int) AS g
       ),
       inserted AS (
         INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                            submitted_at, completed_at, remote_task_id)
         SELECT id, user_id, 'thread-' || (g % 997), 'demo-ordinary', 'ordinary',
                'demo', $3, $7::jsonb, CASE WHEN $3 <> 'queued' THEN now() END,
                CASE WHEN $4 THEN now() END, $8
           FROM src
         RETURNING id
       )
       INSERT INTO task_leases (task_id, user_id, principal, server, queued, next_attempt_at)
       SELECT id, user_id, user_id, 'demo', $3 = 'queued', due
         FROM src
        WHERE NOT $4`,
      [
        spec.count,
        spec.users ?? 100,
        spec.status,
        terminal,
        spec.dueFromMs ?? 0,
        spec.dueToMs ?? 0,
        JSON.stringify(spec.input ?? {}),
        spec.remoteTaskId ?? null,
      ],
    );
  });
}

/**
 * Queued tasks whose demo job runs for a day: once submitted, every status answer is `running`,
 * so each poll reschedules the row and the fleet keeps polling them.
 */
export function loadDayLongJobs(db: Database, count: number): Promise<void> {
  return loadTasks(db, { count, status: 'queued', input: { duration_ms: 86_400_000 } });
}
