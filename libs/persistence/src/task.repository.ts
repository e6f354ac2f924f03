import { Contract, TaskStatus, isTerminal, newTaskId } from '@app/common';
import { TASKS_DUE_CHANNEL } from './channels';
import { CoalescedNotify } from './coalesced-notify';
import { Database, Queryable, jsonParam } from './database';
import { SUBMIT_TASK_IF_CATALOG_SQL, SUBMIT_TASK_SQL } from './sql/submit-quota.sql';
import { TaskRow, toTaskRow } from './task-row';

export interface NewTask {
  userId: string;
  /** The submitter's tenant: the fair-share principal instead of the user (docs/leases.md). */
  tenant?: string | null;
  threadId: string;
  toolset: string;
  contract: Contract;
  server: string;
  input: unknown;
  metadata?: Record<string, unknown> | null;
  idempotencyKey?: string | null;
  /** A hash of the request body: the same key with another body is a conflict. */
  requestHash?: string | null;
  /** The submit's trace context (libs/tracing), when tracing is on. */
  traceContext?: object | null;
  /** The toolset's deadline: the task's `deadline_at` is the insert's time plus this. */
  deadlineSeconds?: number | null;
  /** The failed task this one retries: linked in the insert's transaction (`retry_of`). */
  retryOf?: string | null;
}

/** The two submit quotas (docs/api.md, "Quotas"). */
export type QuotaName = 'active_tasks' | 'submits_per_minute';

/** The quota defaults a submit is checked against; a `principal_quotas` row overrides each. */
export interface SubmitQuota {
  /** Tokens per minute of the user's bucket (a minute's worth may burst); 0 = unlimited. */
  submitsPerMinute: number;
  /** Tasks the user may have queued, working or waiting for input at once; 0 = unlimited. */
  maxActiveTasks: number;
  /** What a refusal on `active_tasks` tells the client to wait: no task's end is predictable. */
  activeRetryAfterSeconds: number;
}

/** What storing a task did, when no quota can refuse it. */
export type StoreResult =
  | { kind: 'created'; task: TaskRow }
  | { kind: 'replayed'; task: TaskRow }
  | { kind: 'conflict'; task: TaskRow };

export type CreateResult =
  StoreResult | { kind: 'refused'; quota: QuotaName; limit: number; retryAfterSeconds: number };

/** What {@link TaskRepository.createIfCatalogUnchanged} did: as `create`, or nothing (`stale`). */
export type GuardedCreateResult = CreateResult | { kind: 'stale' };

export type StatusFilter = 'active' | 'terminal' | TaskStatus;

export type CancelResult =
  { kind: 'not_found' } | { kind: 'terminal'; task: TaskRow } | { kind: 'accepted'; task: TaskRow };

const VISIBLE = 'thread_deleted_at IS NULL';

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
   * it fails the next statement too, where it is reported.
   */
  private readonly wakeUp: CoalescedNotify;

  constructor(private readonly db: Database) {
    this.wakeUp = new CoalescedNotify(db, TASKS_DUE_CHANNEL, 'submit', () => undefined);
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
    let rows: Record<string, unknown>[];
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
    const found = toTaskRow(rows[0]);
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

/**
 * The cancel request as one statement over the active tasks `where` selects (a condition on the
 * task alias it is given), answering each as `task_rows` shows it:
 * - the lease rows are locked first, as every writer of an active task takes them
 *   (fenced-write.sql.ts), in ID order so two cancels of one thread cannot deadlock;
 * - the task rows are written under those locks (an UPDATE reads each row's newest version, so a
 *   submit marked started just before is seen): a queued task whose submit has not started is
 *   cancelled at once, locally (its lease row goes with the `tasks_after_update` trigger, which
 *   voids any claim on it, so its submit can never start), and its claim count is kept;
 * - every other one gets the request on its lease row (the claim's cancel phase), due now unless
 *   a worker holds it: the holder sees the request when it writes.
 */
function cancelSql(where: (alias: string) => string): string {
  const local = `tasks.status = 'queued' AND tasks.submit_started_at IS NULL`;
  return `
WITH lease AS (
  SELECT l.task_id, l.claim_count
    FROM task_leases l JOIN tasks t ON t.id = l.task_id
   WHERE ${where('t')}
   ORDER BY l.task_id
     FOR UPDATE OF l
),
cancelled AS (
  UPDATE tasks
     SET cancel_requested_at = coalesce(tasks.cancel_requested_at, now()),
         status = CASE WHEN ${local} THEN 'cancelled' ELSE tasks.status END,
         completed_at = CASE WHEN ${local} THEN now() ELSE tasks.completed_at END,
         claim_count = CASE WHEN ${local} THEN lease.claim_count ELSE tasks.claim_count END
    FROM lease
   WHERE tasks.id = lease.task_id AND ${where('tasks')}
  RETURNING tasks.*
),
requested AS (
  UPDATE task_leases l
     SET cancel_requested = true,
         next_attempt_at = CASE WHEN l.lease_token IS NULL OR l.lease_expires_at <= now()
                                THEN now() ELSE l.next_attempt_at END
    FROM cancelled c
   WHERE l.task_id = c.id AND c.status <> 'cancelled'
  RETURNING l.task_id, l.next_attempt_at, l.lease_owner, l.lease_expires_at
)
SELECT c.*, r.next_attempt_at, r.lease_owner, r.lease_expires_at
  FROM cancelled c LEFT JOIN requested r ON r.task_id = c.id`;
}

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

/** One of a user's threads, as the console lists them. */
export interface ThreadSummaryRow {
  threadId: string;
  tasks: number;
  active: number;
  lastTaskAt: Date;
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
