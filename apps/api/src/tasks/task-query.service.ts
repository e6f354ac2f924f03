import { Injectable } from '@nestjs/common';
import { TaskStatus } from '@app/common';
import { GatewayMetrics } from '@app/metrics';
import { Database, TaskRepository, listTaskPage } from '@app/persistence';
import { encodeCursor } from './list-cursor';
import { RawListQuery, parseListQuery } from './list-query';
import { TaskPresenter } from './task-presenter.service';
import { TaskSummaryView, TaskView } from '@app/views';
import { NotFound, TaskEnded } from '../refusals/refusal';

/** A page of tasks as answered. */
export interface TaskListView {
  items: TaskSummaryView[];
  next_cursor: string | null;
}

const NOT_FOUND = 'No such task.';

/**
 * Reads, lists and cancels a user's tasks. Every lookup is scoped by user (and thread, under a
 * thread's path) in SQL, so another user's task and a missing one are the same 404.
 */
@Injectable()
export class TaskQueryService {
  constructor(
    private readonly db: Database,
    private readonly tasks: TaskRepository,
    private readonly presenter: TaskPresenter,
    private readonly metrics: GatewayMetrics,
  ) {}

  async list(userId: string, raw: RawListQuery, threadId?: string): Promise<TaskListView> {
    const page = await listTaskPage(this.db, parseListQuery(raw, userId, threadId));
    return {
      items: await this.presenter.summaries(page.rows),
      next_cursor: page.next ? encodeCursor(page.next) : null,
    };
  }

  /** One task; `threadId` undefined finds it in any thread of the user. */
  async get(userId: string, threadId: string | undefined, taskId: string): Promise<TaskView> {
    const row = await this.tasks.findForUser(userId, taskId, threadId);
    if (!row) throw new NotFound(NOT_FOUND);
    return this.presenter.detail(row);
  }

  /**
   * Records a cancel request. Idempotent: a repeated cancel answers like the first, including
   * once the requested cancel has ended the task (a client retrying after a lost answer must
   * not see a 409). A task that ended otherwise (completed, failed, or cancelled upstream
   * unasked) is a 409.
   */
  async cancel(userId: string, threadId: string, taskId: string): Promise<TaskView> {
    const result = await this.tasks.requestCancel(userId, taskId, threadId);
    if (result.kind === 'not_found') throw new NotFound(NOT_FOUND);
    // A queued task whose submit had not started is cancelled here, in SQL, and never reaches a
    // poller: without this count, transitions_total{to="cancelled"} would miss those tasks.
    if (result.kind === 'accepted' && result.task.status === TaskStatus.Cancelled) {
      this.metrics.transitions.inc({ toolset: result.task.toolset, to: TaskStatus.Cancelled });
    }
    const cancelledAsAsked =
      result.task.status === TaskStatus.Cancelled && result.task.cancelRequestedAt !== null;
    if (result.kind === 'terminal' && !cancelledAsAsked) {
      throw new TaskEnded(result.task.status);
    }
    return this.presenter.detail(result.task);
  }

  async deleteThread(userId: string, threadId: string): Promise<void> {
    await this.tasks.deleteThread(userId, threadId, (toolsets) => {
      for (const toolset of toolsets)
        this.metrics.transitions.inc({ toolset, to: TaskStatus.Cancelled });
    });
  }
}
