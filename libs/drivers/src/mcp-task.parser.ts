import {
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  type TaskSnapshot,
  isRecord,
} from '@app/common';
import type { ResultLimits } from './contract-driver';
import { protocolError } from './driver.errors';
import { questionAsRequests } from './input-requests';
import { boundErrorMessage, firstText, pollHintMs, taskBasics } from './snapshot-fields';
import { toolResultSnapshot } from './tool-result';

/** The fields of an MCP `Task` (revision 2025-11-25) the gateway uses; others are ignored. */
export interface ParsedTask {
  taskId: string;
  status: TaskSnapshot['status'];
  statusMessage?: string;
  /**
   * ms the server keeps the task from its creation (2025-11-25: "duration in milliseconds to
   * retain task from creation"); null = unlimited.
   */
  ttl: number | null;
  /** `createdAt` as ms since the epoch, when the server sent a valid ISO 8601 time. */
  createdAt?: number;
  /** ms, validated finite and > 0. */
  pollInterval?: number;
}

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
  const { taskId, status, statusMessage } = taskBasics(value, what);
  const { ttl, pollInterval, createdAt } = value;
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !Number.isFinite(ttl))) {
    throw protocolError(`${what}: "ttl" must be a number or null`);
  }
  const task: ParsedTask = {
    taskId,
    status,
    ttl: typeof ttl === 'number' ? ttl : null,
  };
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  // Read leniently: only the TTL backstop uses it, and a task without it is still trackable.
  const created = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  if (!Number.isNaN(created)) task.createdAt = created;
  if (pollInterval !== undefined)
    task.pollInterval = pollHintMs(pollInterval, 1, `${what}: "pollInterval"`);
  return task;
}

/** A snapshot of a task that needs no result fetch: working, input_required or cancelled. */
export function taskSnapshot(task: ParsedTask): TaskSnapshot {
  const snapshot: TaskSnapshot = { status: task.status };
  if (task.pollInterval !== undefined) snapshot.pollAfterMs = task.pollInterval;
  // The server may drop the task at its TTL without a word: a pushed task is polled by then
  // (docs/connections.md, "Push").
  if (task.ttl !== null && task.createdAt !== undefined) {
    snapshot.backstopAtMs = task.createdAt + task.ttl;
  }
  if (task.status === TaskStatus.InputRequired) {
    // SEP-1686 sends the real elicitation only on a blocking tasks/result stream, which a poller
    // cannot hold for hours: the statusMessage is shown as the question, and it cannot be
    // answered through the gateway (contracts.md, "Answering questions").
    snapshot.inputRequired = {
      ...questionAsRequests(
        task.statusMessage ?? '',
        'tasks/get: "statusMessage" (the input_required question)',
      ),
      answerable: false,
    };
  } else {
    snapshot.inputRequired = null;
  }
  return snapshot;
}

/**
 * The terminal snapshot of a completed or failed task with its `tasks/result` reply (a
 * CallToolResult), by the rule every contract shares (tool-result.ts): an `isError` result ends
 * `failed` with the result kept, whichever of `completed` or `failed` the server chose. On a
 * failed task the error message keeps both the statusMessage and the result's isError text.
 */
export function resultSnapshot(
  task: ParsedTask,
  reply: unknown,
  limits: ResultLimits,
): TaskSnapshot {
  if (!isRecord(reply)) throw protocolError('tasks/result must be a CallToolResult object');
  if (task.status !== TaskStatus.Failed) {
    return { ...toolResultSnapshot(reply, limits, 'tasks/result'), inputRequired: null };
  }
  const fallback =
    reply.isError === true ? undefined : 'the upstream task failed without a message';
  const message = task.statusMessage ?? fallback;
  return { ...toolResultSnapshot(reply, limits, 'tasks/result', message), inputRequired: null };
}
