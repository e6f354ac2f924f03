import { Queryable } from './database';
import { TASKS_DUE_CHANNEL } from './channels';
import { TaskRow, toTaskRow } from './task-row';

/**
 * Answers to a task's questions (docs/contracts.md, "Answering questions"), stored in
 * `tasks.input_responses` by key. The API adds them here; the poller that holds the row's lease
 * marks them sent and delivered through `TaskLeaseRepository`, fenced like every leased write.
 */
export class TaskInputRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Stores answers for keys not stored yet, only while the task waits for input, and makes the
   * row due now unless a poller holds it; a holder's release then makes it due at once
   * (`answers_waiting`: fenced-write.sql.ts, the poll write). Null when nothing was written: the
   * task moved on, or a key was stored meanwhile.
   *
   * One statement: the lease row is locked first, as every writer of an active task does
   * (fenced-write.sql.ts), then the task row is written, then the lease row from what landed.
   */
  async add(
    userId: string,
    threadId: string,
    taskId: string,
    responses: Record<string, unknown>,
  ): Promise<TaskRow | null> {
    const rows = await this.db.query(
      `WITH lease AS (
         SELECT task_id FROM task_leases WHERE task_id = $1 FOR UPDATE
       ),
       stored AS (
         UPDATE tasks
            SET input_responses = coalesce(input_responses, '{}'::jsonb) ||
                  (SELECT jsonb_object_agg(e.key,
                            jsonb_build_object('response', e.value, 'received_at', now()))
                     FROM jsonb_each($4::jsonb) AS e)
           FROM lease
          WHERE tasks.id = lease.task_id AND user_id = $2 AND thread_id = $3
            AND thread_deleted_at IS NULL
            AND status = 'input_required' AND cancel_requested_at IS NULL
            AND NOT (coalesce(input_responses, '{}'::jsonb) ?| ARRAY(SELECT jsonb_object_keys($4::jsonb)))
         RETURNING tasks.*
       ),
       due AS (
         UPDATE task_leases l
            SET next_attempt_at = CASE WHEN l.lease_token IS NULL THEN now() ELSE l.next_attempt_at END,
                answers_waiting = l.answers_waiting OR l.lease_token IS NOT NULL
           FROM stored
          WHERE l.task_id = stored.id
         RETURNING l.task_id, l.next_attempt_at, l.lease_owner, l.lease_expires_at
       )
       SELECT stored.*, due.next_attempt_at, due.lease_owner, due.lease_expires_at
         FROM stored JOIN due ON due.task_id = stored.id`,
      [taskId, userId, threadId, JSON.stringify(responses)],
    );
    if (rows.length === 0) return null;
    // Wakes the pollers' claim loops; the row is due now.
    await this.db.query(`SELECT pg_notify($1, 'input')`, [TASKS_DUE_CHANNEL]);
    return toTaskRow(rows[0]);
  }
}
