import { Inject, Injectable } from '@nestjs/common';
import { isTerminal } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { Database, TaskRepository, TaskRow, listTaskPage } from '@app/persistence';
import { invalidParams } from '@app/wire';
import { decodeCursor, encodeCursor } from '../tasks/list-cursor';
import { inputRequiredView } from '@app/views';
import { TaskInputService } from '../tasks/task-input.service';
import { TaskQueryService } from '../tasks/task-query.service';
import { TaskSubmitService } from '../tasks/task-submit.service';
import { TaskTiming } from './mcp-task.view';
import { HeldRequests } from '../health/held-requests';
import {
  AnswerConflict,
  NotAnswerable,
  NotFound,
  TaskChanged,
  TaskEnded,
} from '../refusals/refusal';

/** First re-read of a held task after this; each gap then grows by half, up to the cap. */
const FIRST_CHECK_MS = 25;
const MAX_CHECK_MS = 500;
/** What the front door tells clients about polling (both task designs). */
const POLL_INTERVAL_MS = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Refusals of an answer that mean only "nothing was stored": the task cannot take it now. */
const NOT_STORED = [NotAnswerable, AnswerConflict, TaskChanged, NotFound];

/** A new task as a tool call asks for it. */
export interface McpCreate {
  userId: string;
  /** The caller's tenant (AUTH_TENANT_CLAIM), for fair share. */
  tenant?: string;
  threadId: string;
  toolset: string;
  arguments: Record<string, unknown>;
  /** Makes the create idempotent per user, like `Idempotency-Key` on `/v1`. */
  idempotencyKey?: string;
}

/**
 * The front door's reach into the gateway's tasks: the very services `/v1` uses (the submit
 * service, the user-scoped repository), so an MCP task is the same row, ID and scope as any
 * other. Another user's task and a missing one look the same: null.
 */
@Injectable()
export class McpTaskAccess {
  /** Retention keeps ended tasks this long: they stay readable at least until then. */
  readonly timing: TaskTiming;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly db: Database,
    private readonly tasks: TaskRepository,
    private readonly submitter: TaskSubmitService,
    private readonly query: TaskQueryService,
    private readonly inputs: TaskInputService,
    private readonly held: HeldRequests,
  ) {
    this.timing = { ttlMs: settings.retention.days * DAY_MS, pollIntervalMs: POLL_INTERVAL_MS };
  }

  /** Stores the task (durably, before any answer) through the same checks as `POST /v1/…`. */
  async create(command: McpCreate): Promise<TaskRow> {
    const outcome = await this.submitter.submit({
      userId: command.userId,
      tenant: command.tenant,
      threadId: command.threadId,
      body: { toolset: command.toolset, arguments: command.arguments },
      idempotencyKey: command.idempotencyKey,
    });
    return outcome.task;
  }

  find(userId: string, taskId: string): Promise<TaskRow | null> {
    return typeof taskId === 'string' && taskId.length <= 64
      ? this.tasks.findForUser(userId, taskId)
      : Promise.resolve(null);
  }

  /** The caller's tasks across threads, newest first. */
  async list(
    userId: string,
    limit: number,
    options: { status?: 'active' | 'terminal'; cursor?: string } = {},
  ): Promise<{ rows: TaskRow[]; nextCursor?: string }> {
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    if (after === null) throw invalidParams('cursor is not one this server issued');
    const page = await listTaskPage(this.db, { userId, limit, status: options.status, after });
    return { rows: page.rows, nextCursor: page.next ? encodeCursor(page.next) : undefined };
  }

  /**
   * Records a cancel request (durable, idempotent); null when the task is not the caller's.
   * A task that has already ended stays as it is.
   */
  async cancel(userId: string, taskId: string): Promise<TaskRow | null> {
    const task = await this.find(userId, taskId);
    if (!task) return null;
    if (isTerminal(task.status)) return task;
    try {
      await this.query.cancel(userId, task.threadId, task.id);
    } catch (error) {
      // Ended between the read and the cancel: the task is as it ended. Anything else (the
      // database refused or lost the write) means no cancel was stored, and acknowledging it
      // would tell the caller a durable cancel exists that does not: the error goes on.
      if (error instanceof NotFound) return null; // its thread was deleted meanwhile
      if (!(error instanceof TaskEnded)) throw error;
    }
    return this.find(userId, taskId);
  }

  /**
   * Stores answers through the same durable path as `POST /v1/…/input` (a poller delivers
   * them upstream, once per key). As the tasks extension asks, keys that are not open questions
   * (never asked, or answered already) are ignored, and a partial set is fine. False when
   * nothing was stored (the task is not waiting, or no key was open); answers that do not fit
   * throw their refusal.
   */
  async answer(row: TaskRow, responses: Record<string, unknown>): Promise<boolean> {
    const open = inputRequiredView(row)?.requests ?? {};
    const fresh = Object.fromEntries(Object.entries(responses).filter(([key]) => key in open));
    if (Object.keys(fresh).length === 0) return false;
    try {
      await this.inputs.answer(row.userId, row.threadId, row.id, { responses: fresh });
      return true;
    } catch (error) {
      if (NOT_STORED.some((refusal) => error instanceof refusal)) return false;
      throw error;
    }
  }

  /** True once the app is closing: a wait that ended early may have ended for that reason. */
  get closing(): boolean {
    return this.held.closing;
  }

  /**
   * Re-reads the task until `done` holds for it (or it has ended), the time is up, `abort` fires
   * or the app closes; answers the task as last read.
   */
  waitFor(
    task: TaskRow,
    done: (row: TaskRow) => boolean,
    abort?: AbortSignal,
    maxMs?: number,
  ): Promise<TaskRow> {
    return this.held.hold({
      task,
      waiting: (row) => !isTerminal(row.status) && !done(row),
      read: () => this.tasks.findForUser(task.userId, task.id),
      deadline: Date.now() + (maxMs ?? this.settings.mcp.maxHoldMs),
      firstCheckMs: FIRST_CHECK_MS,
      maxCheckMs: MAX_CHECK_MS,
      abort,
    });
  }
}
