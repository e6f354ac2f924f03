import {
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  type BoundedResult,
  type TaskSnapshot,
} from '@app/common';
import { boundJsonField, boundResult } from './bound-result';
import type { ResultLimits } from './contract-driver';
import { protocolError } from './driver.errors';
import { boundErrorMessage, firstText, isRecord, pollHintMs } from './snapshot-fields';

/** The fields of an MCP `Task` (revision 2025-11-25) the gateway uses; others are ignored. */
export interface ParsedTask {
  taskId: string;
  status: TaskSnapshot['status'];
  statusMessage?: string;
  /** ms to keep the task after it ends; null = until purged. */
  ttl: number | null;
  /** ms, validated finite and > 0. */
  pollInterval?: number;
}

const STATUSES: readonly string[] = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];

/**
 * The reply to a task-augmented `tools/call`: `{task: {...}}`. A plain CallToolResult with
 * `isError` means the server refused the call; any other shape is a contract break (the server
 * may even have run the tool synchronously, which a poller cannot track).
 */
export function parseCreateTaskReply(reply: unknown): ParsedTask {
  if (isRecord(reply) && !isRecord(reply.task) && reply.isError === true) {
    const text = firstText(reply) ?? 'tools/call answered isError';
    throw new PermanentTaskError(TaskErrorCode.SubmitRejected, boundErrorMessage(text));
  }
  if (!isRecord(reply) || !isRecord(reply.task)) {
    throw protocolError(
      'tools/call with params.task: the reply must nest the task as {task: {taskId, status, ...}}',
    );
  }
  return parseTask(reply.task, 'tools/call: "task"');
}

/** A flat `Task` (tasks/get, tasks/cancel), or the nested one of a create reply. */
export function parseTask(value: unknown, what: string): ParsedTask {
  if (!isRecord(value)) throw protocolError(`${what} must be a Task object`);
  const { taskId, status, statusMessage, ttl, pollInterval } = value;
  if (typeof taskId !== 'string' || taskId === '') {
    throw protocolError(`${what}: "taskId" must be a non-empty string`);
  }
  if (typeof status !== 'string' || !STATUSES.includes(status)) {
    throw protocolError(`${what}: "status" must be one of ${STATUSES.join(', ')}`);
  }
  if (statusMessage !== undefined && typeof statusMessage !== 'string') {
    throw protocolError(`${what}: "statusMessage" must be a string`);
  }
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isFinite(ttl))) {
    throw protocolError(`${what}: "ttl" must be a number or null`);
  }
  const task: ParsedTask = {
    taskId,
    status: status as TaskSnapshot['status'],
    ttl: typeof ttl === 'number' ? ttl : null,
  };
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  if (pollInterval !== undefined)
    task.pollInterval = pollHintMs(pollInterval, 1, `${what}: "pollInterval"`);
  return task;
}

/** A snapshot of a task that needs no result fetch: working, input_required or cancelled. */
export function taskSnapshot(task: ParsedTask): TaskSnapshot {
  const snapshot: TaskSnapshot = { status: task.status };
  if (task.pollInterval !== undefined) snapshot.pollAfterMs = task.pollInterval;
  if (task.status === TaskStatus.InputRequired) {
    // Answering the elicitation is not part of the contract yet: the question is shown as is.
    snapshot.inputRequired = boundJsonField(
      { question: task.statusMessage ?? '' },
      'tasks/get: "statusMessage" (the input_required question)',
    );
  } else {
    snapshot.inputRequired = null;
  }
  return snapshot;
}

/**
 * The terminal snapshot of a completed or failed task with its `tasks/result` reply (a
 * CallToolResult), stored under the result bounds without its `_meta`. On failure the error
 * message keeps both the statusMessage and the result's isError text.
 */
export function resultSnapshot(
  task: ParsedTask,
  reply: unknown,
  limits: ResultLimits,
): TaskSnapshot {
  if (!isRecord(reply)) throw protocolError('tasks/result must be a CallToolResult object');
  const { _meta: _dropped, ...callResult } = reply;
  const result: BoundedResult = boundResult(callResult, limits, 'tasks/result');
  const snapshot: TaskSnapshot = { status: task.status, result, inputRequired: null };
  if (task.status === TaskStatus.Failed) {
    const text = reply.isError === true ? firstText(reply) : undefined;
    const parts = [task.statusMessage, text].filter((part): part is string => !!part);
    const message =
      parts.length > 0 ? parts.join(': ') : 'the upstream task failed without a message';
    snapshot.error = { code: TaskErrorCode.UpstreamFailed, message: boundErrorMessage(message) };
  }
  return snapshot;
}
