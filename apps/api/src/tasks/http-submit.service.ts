import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { TaskStatus } from '@app/common';
import { TaskRepository } from '@app/persistence';
import { TaskView } from '@app/views';
import { parsePreferWait } from './prefer-wait';
import { TaskPresenter } from './task-presenter.service';
import { TaskSubmitService } from './task-submit.service';
import { NotFound, NotRetryable } from '../refusals/refusal';

/** A submit as `POST /v1/threads/{thread_id}/tasks` carries it, past authentication. */
export interface HttpSubmitRequest {
  userId: string;
  tenant?: string;
  /** Already checked against the thread ID pattern. */
  threadId: string;
  body: unknown;
  idempotencyKey?: string;
  prefer?: string;
  /** The failed task a retry submits again (`POST …/retry`). */
  retryOf?: string;
  traceparent?: string;
  tracestate?: string;
  /** The answer's response: a held answer ends early on its `close` (the client went away). */
  res: Pick<ServerResponse, 'once'>;
}

/** What the route answers: the status, the headers in the order they are set, the task. */
export interface HttpSubmitAnswer {
  status: 200 | 201;
  headers: [name: string, value: string][];
  task: TaskView;
}

/**
 * The HTTP side of a submit, shared by the Nest route and the submit fast path so that both
 * answer alike: `Prefer: wait`, the status (201 created, 200 for a replay), `Location`,
 * `Preference-Applied` and the task as shown. Refusals are thrown as problems.
 */
@Injectable()
export class HttpSubmitService {
  constructor(
    private readonly submitter: TaskSubmitService,
    private readonly presenter: TaskPresenter,
    private readonly tasks: TaskRepository,
  ) {}

  /**
   * `POST …/tasks/{task_id}/retry`: a failed task of the caller submitted again as a new task in
   * its thread, with its toolset, arguments and metadata, linked by `retry_of`. It is a submit in
   * every other way: the toolset must still take tasks and the arguments fit its schema now,
   * the quotas apply, and `Idempotency-Key` and `Prefer: wait` work as on a submit.
   */
  async retry(
    request: Omit<HttpSubmitRequest, 'body' | 'retryOf'> & { taskId: string },
  ): Promise<HttpSubmitAnswer> {
    const original = await this.tasks.findForUser(request.userId, request.taskId, request.threadId);
    if (!original) throw new NotFound('No such task.');
    if (original.status !== TaskStatus.Failed) throw new NotRetryable(original.status);
    return this.answer({
      ...request,
      body: { toolset: original.toolset, arguments: original.input, metadata: original.metadata },
      retryOf: original.id,
    });
  }

  async answer(request: HttpSubmitRequest): Promise<HttpSubmitAnswer> {
    const waitSeconds = parsePreferWait(request.prefer);
    // Only a held answer needs to learn of a disconnect; an abort per request costs CPU.
    let abort: AbortController | undefined;
    if (waitSeconds !== undefined) {
      const controller = new AbortController();
      request.res.once('close', () => controller.abort());
      abort = controller;
    }
    const outcome = await this.submitter.submit({
      userId: request.userId,
      tenant: request.tenant,
      threadId: request.threadId,
      body: request.body,
      idempotencyKey: request.idempotencyKey,
      retryOf: request.retryOf,
      waitSeconds,
      abort: abort?.signal,
      trace: { traceparent: request.traceparent, tracestate: request.tracestate },
    });
    const headers: [string, string][] = [
      ['Location', `/v1/threads/${request.threadId}/tasks/${outcome.task.id}`],
    ];
    if (waitSeconds !== undefined) headers.push(['Preference-Applied', `wait=${waitSeconds}`]);
    return {
      status: outcome.created ? 201 : 200,
      headers,
      task: await this.presenter.detail(outcome.task, outcome.entry),
    };
  }
}
