import { TaskErrorCode, TaskStatus, type TaskSnapshot, isRecord, isTerminal } from '@app/common';
import type { ResultLimits } from './contract-driver';
import { protocolError } from './driver.errors';
import { inputRequired, type InputRequest } from './input-requests';
import { toolResultSnapshot } from './tool-result';
import { boundErrorMessage, taskBasics } from './snapshot-fields';

/**
 * A SEP-2663 task (MCP 2026-07-28 tasks extension) as `tools/call` creates it and `tasks/get`
 * details it: flat, `ttlMs` and `pollIntervalMs` in ms, the outcome inlined.
 */
export interface StatelessTask {
  taskId: string;
  status: TaskSnapshot['status'];
  statusMessage?: string;
  /** ms since the epoch; with `ttlMs` the gateway's backstop. */
  createdAt: number;
  /** null = unlimited. */
  ttlMs: number | null;
  pollIntervalMs?: number;
  /** completed: the CallToolResult. */
  result?: Record<string, unknown>;
  /** failed: the JSON-RPC error. */
  error?: { code: number; message: string };
  /** input_required: every outstanding request. */
  inputRequests?: Record<string, InputRequest>;
}

/** What a `tools/call` answered: the server decides (`resultType`). */
export type ToolCallReply =
  | { kind: 'complete'; result: Record<string, unknown> }
  | { kind: 'task'; task: StatelessTask }
  | { kind: 'input'; requests: Record<string, InputRequest>; requestState?: string };

export function parseToolCallReply(reply: Record<string, unknown>): ToolCallReply {
  switch (reply.resultType) {
    case 'task':
      return { kind: 'task', task: parseStatelessTask(reply, 'tools/call', true) };
    case 'input_required': {
      const { requests } = inputRequired(reply.inputRequests, 'tools/call: "inputRequests"');
      const state = reply.requestState;
      if (state !== undefined && typeof state !== 'string') {
        throw protocolError('tools/call: "requestState" must be a string');
      }
      return state === undefined
        ? { kind: 'input', requests }
        : { kind: 'input', requests, requestState: state };
    }
    case 'complete':
    case undefined:
      return { kind: 'complete', result: reply };
    default:
      throw protocolError(
        'tools/call: "resultType" must be "complete", "task" or "input_required"',
      );
  }
}

/**
 * A `CreateTaskResult` (`created`) or a `tasks/get` result (a `DetailedTask`). Only the latter
 * inlines the outcome: a create result carries no `result`, `error` or `inputRequests`, whatever
 * its status, so a task that ended before its create answer was written (a quick task, a loaded
 * server) is read as ended, and the driver polls it at once for the outcome.
 */
export function parseStatelessTask(value: unknown, what: string, created = false): StatelessTask {
  if (!isRecord(value)) throw protocolError(`${what} must be a task object`);
  const { taskId, status, statusMessage } = taskBasics(value, what);
  const { createdAt, ttlMs, pollIntervalMs } = value;
  const createdMs = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  if (Number.isNaN(createdMs)) {
    throw protocolError(`${what}: "createdAt" must be an ISO 8601 time`);
  }
  if (ttlMs !== null && !positiveInt(ttlMs)) {
    throw protocolError(`${what}: "ttlMs" must be a positive integer or null`);
  }
  if (pollIntervalMs !== undefined && !positiveInt(pollIntervalMs)) {
    throw protocolError(`${what}: "pollIntervalMs" must be a positive integer`);
  }
  const task: StatelessTask = {
    taskId,
    status,
    createdAt: createdMs,
    ttlMs: ttlMs as number | null,
  };
  if (statusMessage !== undefined) task.statusMessage = statusMessage;
  if (pollIntervalMs !== undefined) task.pollIntervalMs = pollIntervalMs as number;
  if (created) return task;
  if (status === TaskStatus.Completed) {
    if (!isRecord(value.result)) throw protocolError(`${what}: a completed task carries "result"`);
    task.result = value.result;
  }
  if (status === TaskStatus.Failed) {
    const error = value.error;
    if (!isRecord(error) || typeof error.code !== 'number') {
      throw protocolError(`${what}: a failed task carries "error" {code, message}`);
    }
    task.error = {
      code: error.code,
      message: typeof error.message === 'string' ? error.message : '',
    };
  }
  if (status === TaskStatus.InputRequired) {
    task.inputRequests = inputRequired(value.inputRequests, `${what}: "inputRequests"`).requests;
  }
  return task;
}

/**
 * The gateway's view of a SEP-2663 task. `completed` keeps the CallToolResult (an `isError`
 * result ends `failed` / `upstream_failed` with the result kept, as on every contract); `failed`
 * (a JSON-RPC error) ends `upstream_failed` with the statusMessage and the error's text.
 */
export function statelessSnapshot(task: StatelessTask, limits: ResultLimits): TaskSnapshot {
  switch (task.status) {
    case TaskStatus.Completed:
      return toolResultSnapshot(task.result ?? {}, limits, 'tasks/get: "result"');
    case TaskStatus.Failed: {
      const error = task.error ?? { code: 0, message: '' };
      const parts = [task.statusMessage, `${error.message} (JSON-RPC error ${error.code})`];
      const message = parts.filter((part): part is string => !!part).join(': ');
      return {
        status: TaskStatus.Failed,
        inputRequired: null,
        error: { code: TaskErrorCode.UpstreamFailed, message: boundErrorMessage(message) },
      };
    }
    case TaskStatus.InputRequired: {
      const snapshot: TaskSnapshot = {
        status: TaskStatus.InputRequired,
        inputRequired: { requests: task.inputRequests ?? {} },
      };
      return withSchedule(snapshot, task);
    }
    default:
      return withSchedule({ status: task.status, inputRequired: null }, task);
  }
}

/** An active task's hints for its next poll: the server's interval and its TTL backstop. */
export function withSchedule(
  snapshot: TaskSnapshot,
  task: Pick<StatelessTask, 'pollIntervalMs' | 'createdAt' | 'ttlMs'>,
): TaskSnapshot {
  if (task.pollIntervalMs !== undefined) snapshot.pollAfterMs = task.pollIntervalMs;
  if (task.ttlMs !== null && !isTerminal(snapshot.status)) {
    snapshot.backstopAtMs = task.createdAt + task.ttlMs;
  }
  return snapshot;
}

function positiveInt(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
