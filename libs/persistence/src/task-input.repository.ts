import { LeaseLostError } from '@app/common';
import type { TaskLease } from './claimed-task';
import { Queryable } from './database';
import { fencedUpdateSql } from './sql/fenced-write.sql';
import { TaskRow, toTaskRow } from './task-row';

/**
 * Sets `field` (an ISO time from the database clock) on the stored answers of the keys in `$3`,
 * or removes it; answers added meanwhile by the API are kept (the row is re-read under its lock).
 */
function markKeys(field: 'sent_at' | 'delivered_at', remove = false): string {
  const value = remove
    ? `input_responses -> k - '${field}'`
    : `input_responses -> k || jsonb_build_object('${field}', now())`;
  return `input_responses = input_responses || coalesce(
    (SELECT jsonb_object_agg(k, ${value}) FROM unnest($3::text[]) AS k
      WHERE input_responses ? k), '{}'::jsonb)`;
}

/**
 * Answers to a task's questions (docs/contracts.md, "Answering questions"), stored in
 * `tasks.input_responses` by key. The API adds them; the poller that holds the row's lease marks
 * them sent before it sends them and delivered once the upstream acknowledged, both fenced.
 */
export class TaskInputRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Stores answers for keys not stored yet, only while the task waits for input, and makes the
   * row due now unless a poller holds it (its release makes it due: migration InputResponses).
   * Null when nothing was written: the task moved on, or a key was stored meanwhile.
   */
  async add(
    userId: string,
    threadId: string,
    taskId: string,
    responses: Record<string, unknown>,
  ): Promise<TaskRow | null> {
    const rows = await this.db.query(
      `UPDATE tasks
          SET input_responses = coalesce(input_responses, '{}'::jsonb) ||
                (SELECT jsonb_object_agg(e.key,
                          jsonb_build_object('response', e.value, 'received_at', now()))
                   FROM jsonb_each($4::jsonb) AS e),
              next_attempt_at = CASE WHEN lease_token IS NULL THEN now() ELSE next_attempt_at END
        WHERE id = $1 AND user_id = $2 AND thread_id = $3 AND thread_deleted_at IS NULL
          AND status = 'input_required' AND cancel_requested_at IS NULL
          AND NOT (coalesce(input_responses, '{}'::jsonb) ?| ARRAY(SELECT jsonb_object_keys($4::jsonb)))
        RETURNING *`,
      [taskId, userId, threadId, JSON.stringify(responses)],
    );
    if (rows.length === 0) return null;
    // Wakes the pollers' claim loops; the row is due now.
    await this.db.query(`SELECT pg_notify('mcp_tasks_due', 'input')`);
    return toTaskRow(rows[0]);
  }

  /** Durably, before sending: these keys may reach the upstream from now on. */
  async markSent(lease: TaskLease, keys: readonly string[]): Promise<void> {
    await this.fenced(lease, markKeys('sent_at'), keys);
  }

  /** The send provably did not happen (or is safe to repeat): the keys are pending again. */
  async unmarkSent(lease: TaskLease, keys: readonly string[]): Promise<void> {
    await this.fenced(lease, markKeys('sent_at', true), keys);
  }

  /** The upstream acknowledged these keys: never sent again. */
  async markDelivered(lease: TaskLease, keys: readonly string[]): Promise<void> {
    await this.fenced(lease, markKeys('delivered_at'), keys);
  }

  private async fenced(lease: TaskLease, set: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const rows = await this.db.query(fencedUpdateSql(set), [lease.taskId, lease.token, keys]);
    if (rows.length === 0) throw new LeaseLostError(lease.taskId);
  }
}
