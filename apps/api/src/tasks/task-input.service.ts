import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import { TaskStatus, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskInputRepository, TaskRepository, TaskRow } from '@app/persistence';
import { InputRequiredView, TaskView, acceptsAnswers, inputRequiredView } from '@app/views';
import { ProblemFieldError } from '../problem/problem.exception';
import { ArgumentsValidator } from './arguments-validator.service';
import { TaskPresenter } from './task-presenter.service';
import {
  AnswerConflict,
  InvalidArguments,
  NotAnswerable,
  NotFound,
  PayloadTooLarge,
  TaskChanged,
} from '../refusals/refusal';
import { pointerToken } from '../http/json-pointer';

const NOT_FOUND = 'No such task.';
const ELICIT_ACTIONS = ['accept', 'decline', 'cancel'];

/**
 * Answers to a task's questions (docs/api.md, "Answering a question"). The API only validates and
 * stores them; the poller that next claims the task sends them upstream. A key is answered once
 * for the task's life: the same answer again is harmless, a different one is a conflict.
 */
@Injectable()
export class TaskInputService {
  constructor(
    private readonly tasks: TaskRepository,
    private readonly inputs: TaskInputRepository,
    private readonly validator: ArgumentsValidator,
    private readonly presenter: TaskPresenter,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async answer(userId: string, threadId: string, taskId: string, body: unknown): Promise<TaskView> {
    const responses = parseBody(body);
    this.checkSizes(responses);
    // One retry: a concurrent POST may store a key between our read and our write.
    for (let attempt = 0; ; attempt++) {
      const row = await this.tasks.findForUser(userId, taskId, threadId);
      if (!row) throw new NotFound(NOT_FOUND);
      const fresh = this.check(row, responses);
      if (Object.keys(fresh).length === 0) return this.presenter.detail(row);
      const stored = await this.inputs.add(userId, threadId, taskId, fresh);
      if (stored) return this.presenter.detail(stored);
      if (attempt >= 1) throw new TaskChanged();
    }
  }

  /**
   * Each answer is stored in the task row and sent upstream as it is, so each has a bound of its
   * own, MAX_INPUT_RESPONSE_BYTES of compact JSON (the body's 1 MiB would otherwise be the only
   * one): a larger answer is a 413 naming the bound and every answer over it.
   */
  private checkSizes(responses: Record<string, unknown>): void {
    const max = this.settings.api.maxInputResponseBytes;
    const errors = Object.entries(responses).flatMap(([key, response]) => {
      const bytes = Buffer.byteLength(JSON.stringify(response) ?? '');
      return bytes > max
        ? [{ path: pointer(key), message: `is ${bytes} bytes of JSON; at most ${max} are allowed` }]
        : [];
    });
    if (errors.length > 0) {
      throw new PayloadTooLarge(
        `An answer may hold at most ${max} bytes of JSON (MAX_INPUT_RESPONSE_BYTES).`,
        errors,
      );
    }
  }

  /** The answers not stored yet, after every rule; throws the problem otherwise. */
  private check(row: TaskRow, responses: Record<string, unknown>): Record<string, unknown> {
    const answered = row.inputResponses ?? {};
    const repeats = Object.keys(responses).filter((key) => key in answered);
    const conflicting = repeats.filter(
      (key) => !isDeepStrictEqual(answered[key].response, responses[key]),
    );
    if (conflicting.length > 0) {
      throw new AnswerConflict(
        `Already answered differently: ${conflicting.map((k) => JSON.stringify(k)).join(', ')}.`,
      );
    }
    const fresh = Object.fromEntries(
      Object.entries(responses).filter(([key]) => !(key in answered)),
    );
    if (Object.keys(fresh).length === 0) return fresh; // a repeated POST: harmless
    if (row.status !== TaskStatus.InputRequired) {
      throw new NotAnswerable(`The task is ${row.status}, not waiting for input.`);
    }
    if (row.cancelRequestedAt !== null) {
      throw new NotAnswerable('The task is being cancelled.');
    }
    if (!acceptsAnswers(row)) {
      throw new NotAnswerable(
        "This task's upstream cannot take answers through the gateway; its question is shown for information.",
      );
    }
    const open = inputRequiredView(row)?.requests ?? {};
    const errors: ProblemFieldError[] = [];
    for (const [key, response] of Object.entries(fresh)) {
      const request = open[key];
      if (!request) {
        errors.push({ path: pointer(key), message: 'is not an open question of this task' });
      } else {
        errors.push(...this.fits(key, request, response));
      }
    }
    if (errors.length > 0) throw new InvalidArguments('Some answers do not fit.', errors);
    return fresh;
  }

  /**
   * An elicitation answer is an ElicitResult; an accepted one's `content` must fit the
   * `requestedSchema` when the question gives one. Other methods' answers must be objects.
   */
  private fits(
    key: string,
    request: InputRequiredView['requests'][string],
    response: unknown,
  ): ProblemFieldError[] {
    const at = pointer(key);
    if (typeof response !== 'object' || response === null || Array.isArray(response)) {
      return [{ path: at, message: 'must be an object (the result of the request)' }];
    }
    if (request.method !== 'elicitation/create') return [];
    const { action, content } = response as { action?: unknown; content?: unknown };
    if (typeof action !== 'string' || !ELICIT_ACTIONS.includes(action)) {
      return [{ path: `${at}/action`, message: `must be one of ${ELICIT_ACTIONS.join(', ')}` }];
    }
    const schema = request.params.requestedSchema;
    if (action !== 'accept' || typeof schema !== 'object' || schema === null) return [];
    return this.validator.validate(schema as Record<string, unknown>, content).map((error) => ({
      path: `${at}/content${error.path.slice('/arguments'.length)}`,
      message: error.message,
    }));
  }
}

function parseBody(body: unknown): Record<string, unknown> {
  const responses = (body as { responses?: unknown } | null)?.responses;
  if (!isRecord(body)) {
    throw new InvalidArguments('The body must be {"responses": {...}}.', [
      { path: '', message: 'must be an object' },
    ]);
  }
  const extra = Object.keys(body).filter((key) => key !== 'responses');
  if (extra.length > 0) {
    throw new InvalidArguments('The body must be {"responses": {...}}.', [
      { path: `/${extra[0]}`, message: 'is not allowed' },
    ]);
  }
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw new InvalidArguments('The body must be {"responses": {...}}.', [
      { path: '/responses', message: 'is required and must be an object of answers by key' },
    ]);
  }
  if (Object.keys(responses).length === 0) {
    throw new InvalidArguments('Answer at least one question.', [
      { path: '/responses', message: 'must have at least one key' },
    ]);
  }
  return responses as Record<string, unknown>;
}

function pointer(key: string): string {
  return `/responses/${pointerToken(key)}`;
}
