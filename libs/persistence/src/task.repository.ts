import { TaskStatus, isTerminal, newTaskId } from '@app/common';
import { TASKS_DUE_CHANNEL } from './channels';
import { CoalescedNotify } from './coalesced-notify';
import { Database, Queryable, jsonParam } from './database';
import { cancelSql } from './sql/cancel-request.sql';
import { SUBMIT_TASK_IF_CATALOG_SQL, SUBMIT_TASK_SQL } from './sql/submit-quota.sql';
import { TaskRow, toTaskRow } from './task-row';
import type {
  CancelResult,
  CreateResult,
  GuardedCreateResult,
  NewTask,
  QuotaName,
  StoreResult,
  SubmitQuota,
} from './task.types';

/**
 * Least time between two of a process's submit wake-ups (docs/leases.md, "Wake-ups"): the
 * pollers' default `CLAIM_MIN_GAP_MS`, at which they gather wake-ups anyway, so a poller woken
 * by the last NOTIFY could not claim much sooner. One in flight at a time was a statement for
 * every one or two submits at 300/s.
 */
const SUBMIT_WAKE_GAP_MS = 20;

/** The rows a consumer may see: not in a deleted thread. */
export const VISIBLE = 'thread_deleted_at IS NULL';

/**
 * The API's side of the task store: create (idempotent per user and key), read, list with
 * keyset pagination, cancel requests and thread deletion. Every read is scoped to the user and
 * hides tasks of deleted threads.
 */
export class TaskRepository {
  /**
   * The pollers' wake-up for the quota-checked submit, sent after its commit (the submit's own
   * transaction sends none: migrations/…-SubmitNotifyAfterCommit). A failed one is dropped: it
   * costs latency only (the pollers' timers claim the task anyway), and the outage that failed
   * it fails the next statement too, where it is reported. At most one per
   * {@link SUBMIT_WAKE_GAP_MS}; a submit after a quiet spell wakes the pollers at once.
   */
  private readonly wakeUp: CoalescedNotify;

  constructor(private readonly db: Database) {
    this.wakeUp = new CoalescedNotify(
      db,
      TASKS_DUE_CHANNEL,
      'submit',
      () => undefined,
      SUBMIT_WAKE_GAP_MS,
    );
  }

  /**
   * Stores a new task, once per idempotency key, checked against the user's quotas and stored in
   * one call of `submit_task` (migrations/…-SubmitTaskFunction says how replicas stay within
   * them); a refused submit writes nothing. A replay of an earlier idempotent submit is answered
   * whatever the quotas say, and spends none of them. A quota of 0 is unlimited.
   */
  async create(task: NewTask, quota: SubmitQuota): Promise<CreateResult> {
    const result = await this.checkedSubmit(newTaskId(), task, quota);
    // submit_task answers a row or raises: only the catalog-guarded call can answer none.
    if (result.kind === 'stale') throw new Error('submit_task answered no row');
    return result;
  }

  /**
   * The task an earlier submit of this user stored under `task`'s idempotency key: a `replayed`
   * one when the thread and the request hash match, else a `conflict`; null when the key is unused.
   */
  async findEarlier(
    task: Pick<NewTask, 'userId' | 'threadId' | 'idempotencyKey' | 'requestHash'>,
  ): Promise<StoreResult | null> {
    if (!task.idempotencyKey) return null;
    const rows = await this.db.query(
      `SELECT * FROM task_rows WHERE user_id = $1 AND idempotency_key = $2`,
      [task.userId, task.idempotencyKey],
    );
    return rows.length > 0 ? earlier(task, toTaskRow(rows[0])) : null;
  }

  /**
   * {@link create} with `quota`, only while the toolset's catalog row is still the version
   * `catalogVersion` (its `xmin`) names; else nothing is written and the answer is `stale`. The
   * catalog check and the insert are one statement (sql/submit-quota.sql.ts).
   */
  createIfCatalogUnchanged(
    task: NewTask,
    quota: SubmitQuota,
    catalogVersion: string,
  ): Promise<GuardedCreateResult> {
    return this.checkedSubmit(newTaskId(), task, quota, catalogVersion);
  }

  private async checkedSubmit(
    id: string,
    task: NewTask,
    quota: SubmitQuota,
    catalogVersion?: string,
  ): Promise<GuardedCreateResult> {
    // A retry's link is written with its insert: a crash between the two cannot leave a retry
    // that does not name its original. A plain submit stays one statement, no transaction.
    const retryOf = task.retryOf;
    const result = retryOf
      ? await this.db.transaction(async (tx) => {
          const inserted = await this.submitOn(tx, id, task, quota, catalogVersion);
          if (inserted.kind !== 'created') return inserted;
          await tx.query(`UPDATE tasks SET retry_of = $2 WHERE id = $1`, [id, retryOf]);
          return { kind: 'created' as const, task: { ...inserted.task, retryOf } };
        })
      : await this.submitOn(this.db, id, task, quota, catalogVersion);
    if (result.kind === 'created') this.wakeUp.send();
    return result;
  }

  /** `submit_task` on `q`: the quota-checked insert, or the earlier task of its key. */
  private async submitOn(
    q: Queryable,
    id: string,
    task: NewTask,
    quota: SubmitQuota,
    catalogVersion?: string,
  ): Promise<GuardedCreateResult> {
    const params = [
      id,
      ...columns(task),
      quota.submitsPerMinute,
      quota.maxActiveTasks,
      quota.activeRetryAfterSeconds,
    ];
    let rows: { task: Record<string, unknown> }[];
    try {
      rows =
        catalogVersion === undefined
          ? await q.query(SUBMIT_TASK_SQL, params, 'submit_task')
          : await q.query(
              SUBMIT_TASK_IF_CATALOG_SQL,
              [...params, catalogVersion],
              'submit_task_if_catalog',
            );
    } catch (error) {
      const refusal = quotaRefusal(error);
      if (refusal) return refusal;
      throw error;
    }
    if (rows.length === 0) return { kind: 'stale' };
    const found = toTaskRow(rows[0].task);
    if (found.id !== id) return earlier(task, found);
    return { kind: 'created', task: found };
  }

  async findForUser(userId: string, taskId: string, threadId?: string): Promise<TaskRow | null> {
    const rows = await this.db.query(
      `SELECT * FROM task_rows WHERE id = $1 AND user_id = $2 AND ${VISIBLE}
         AND ($3::text IS NULL OR thread_id = $3)`,
      [taskId, userId, threadId ?? null],
    );
    return rows.length > 0 ? toTaskRow(rows[0]) : null;
  }

  /** The caller's tasks among `taskIds` (others, and missing ones, are left out): one query. */
  async findManyForUser(userId: string, taskIds: readonly string[]): Promise<TaskRow[]> {
    if (taskIds.length === 0) return [];
    const rows = await this.db.query(
      `SELECT * FROM task_rows WHERE id = ANY($1::text[]) AND user_id = $2 AND ${VISIBLE}`,
      [taskIds, userId],
    );
    return rows.map(toTaskRow);
  }

  /**
   * A visible task by ID alone, whoever's it is: only for a holder of a signed answer link
   * (docs/console.md, "Answer links"), which names the task and is checked before this read.
   */
  async findById(taskId: string): Promise<TaskRow | null> {
    const rows = await this.db.query(`SELECT * FROM task_rows WHERE id = $1 AND ${VISIBLE}`, [
      taskId,
    ]);
    return rows.length > 0 ? toTaskRow(rows[0]) : null;
  }

  /** The user's threads (those with a visible task), the most recently used first. */
  async listThreads(userId: string, limit: number): Promise<ThreadSummaryRow[]> {
    const rows = await this.db.query(
      `SELECT thread_id, count(*)::int AS tasks,
              (count(*) FILTER (WHERE status IN ('queued', 'working', 'input_required')))::int AS active,
              max(created_at) AS last_task_at
         FROM task_rows WHERE user_id = $1 AND ${VISIBLE}
        GROUP BY thread_id ORDER BY last_task_at DESC, thread_id LIMIT $2`,
      [userId, limit],
    );
    return rows.map((row) => ({
      threadId: row.thread_id as string,
      tasks: row.tasks as number,
      active: row.active as number,
      lastTaskAt: row.last_task_at as Date,
    }));
  }

  /**
   * Records a cancel request. A queued task whose submit has not started is cancelled at once,
   * locally (any claim on it is voided, so its submit can never start). Otherwise the request
   * is stored and the row made due for the cancel phase, unless a worker holds it: the holder
   * sees the request when it writes. Idempotent.
   */
  async requestCancel(userId: string, taskId: string, threadId?: string): Promise<CancelResult> {
    const params = [taskId, userId, threadId ?? null];
    const mine = (t: string) =>
      `${t}.id = $1 AND ${t}.user_id = $2 AND ${t}.${VISIBLE} AND ($3::text IS NULL OR ${t}.thread_id = $3)`;
    const updated = await this.db.query(cancelSql(mine), params);
    if (updated.length > 0) return { kind: 'accepted', task: toTaskRow(updated[0]) };
    // No active task matched: it ended already, or it is not the caller's to see.
    const current = await this.findForUser(userId, taskId, threadId);
    if (current && isTerminal(current.status)) return { kind: 'terminal', task: current };
    return { kind: 'not_found' };
  }

  /**
   * Hides every task of the thread (a new thread with the same ID starts empty) and cancels the
   * active ones. Returns how many tasks were hidden.
   *
   * @param onCancelled told, after commit, the toolset of each task this call cancelled locally
   *   (queued, submit not started): no poller ever sees those rows, so the caller counts their
   *   transition to `cancelled` or nobody does.
   */
  async deleteThread(
    userId: string,
    threadId: string,
    onCancelled?: (toolsets: readonly string[]) => void,
  ): Promise<number> {
    const result = await this.db.transaction(async (tx) => {
      const touched = await tx.query<{ status: TaskStatus; toolset: string }>(
        cancelSql((t) => `${t}.user_id = $1 AND ${t}.thread_id = $2 AND ${t}.${VISIBLE}`),
        [userId, threadId],
      );
      const hidden = await tx.query(
        `UPDATE tasks SET thread_deleted_at = now()
          WHERE user_id = $1 AND thread_id = $2 AND ${VISIBLE} RETURNING id`,
        [userId, threadId],
      );
      // Only active rows (those with a lease row) were taken, so a row now `cancelled` was
      // cancelled by this statement.
      const cancelled = touched.filter((r) => r.status === TaskStatus.Cancelled);
      return { hidden: hidden.length, cancelled: cancelled.map((r) => r.toolset) };
    });
    onCancelled?.(result.cancelled);
    return result.hidden;
  }
}

/** The submit's column values after the ID, in submit_task's order (submit-quota.sql.ts). */
function columns(task: NewTask): unknown[] {
  return [
    task.userId,
    task.threadId,
    task.toolset,
    task.contract,
    task.server,
    JSON.stringify(task.input ?? {}),
    jsonParam(task.metadata),
    task.idempotencyKey ?? null,
    task.requestHash ?? null,
    task.traceContext ? JSON.stringify(task.traceContext) : null,
    task.deadlineSeconds ?? null,
    task.tenant ?? null,
  ];
}

/** The same idempotency key's earlier task: a replay of this request, or a conflict. */
function earlier(task: Pick<NewTask, 'threadId' | 'requestHash'>, found: TaskRow): StoreResult {
  const same = found.requestHash === (task.requestHash ?? null) && found.threadId === task.threadId;
  return { kind: same ? 'replayed' : 'conflict', task: found };
}

/** A `submit_task` refusal (SQLSTATE `QUOTA`, DETAIL `<quota> <limit> <seconds>`), else null. */
function quotaRefusal(error: unknown): CreateResult | null {
  const { code, detail } = (error ?? {}) as { code?: string; detail?: string };
  const match = code === 'QUOTA' ? /^(\w+) (\d+) (\d+)$/.exec(detail ?? '') : null;
  if (!match) return null;
  return {
    kind: 'refused',
    quota: match[1] as QuotaName,
    limit: Number(match[2]),
    retryAfterSeconds: Math.max(1, Number(match[3])),
  };
}

/** One of a user's threads, as the console lists them. */
export interface ThreadSummaryRow {
  threadId: string;
  tasks: number;
  active: number;
  lastTaskAt: Date;
}
