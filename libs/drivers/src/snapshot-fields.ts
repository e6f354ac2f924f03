import {
  ERROR_MESSAGE_STORED_CHARS,
  PermanentTaskError,
  TaskErrorCode,
  LAST_ERROR_CHARS,
  PROGRESS_MESSAGE_CHARS,
  REMOTE_TASK_ID_MAX_CHARS,
  cutText,
  isRecord,
  unstorableTextProblem,
  type TaskProgress,
  type TaskSnapshot,
} from '@app/common';
import { protocolError } from './driver.errors';

/** A task's statuses, the same in both task revisions (2025-11-25 and SEP-2663). */
const TASK_STATUSES: readonly string[] = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];

/**
 * The fields every revision's task object shares, checked: a non-empty `taskId`, a known
 * `status` and an optional string `statusMessage`.
 */
export function taskBasics(
  value: Record<string, unknown>,
  what: string,
): { taskId: string; status: TaskSnapshot['status']; statusMessage?: string } {
  const { taskId, status, statusMessage } = value;
  if (typeof taskId !== 'string' || taskId === '') {
    throw protocolError(`${what}: "taskId" must be a non-empty string`);
  }
  if (typeof status !== 'string' || !TASK_STATUSES.includes(status)) {
    throw protocolError(`${what}: "status" must be one of ${TASK_STATUSES.join(', ')}`);
  }
  if (statusMessage !== undefined && typeof statusMessage !== 'string') {
    throw protocolError(`${what}: "statusMessage" must be a string`);
  }
  return { taskId, status: status as TaskSnapshot['status'], statusMessage };
}

/** An error message as stored: cut to 4,000 chars (the API shows at most 1,000). */
export function boundErrorMessage(text: string): string {
  return cutText(text, ERROR_MESSAGE_STORED_CHARS);
}

/** The text of the first content block, if it is a text block. */
export function firstText(result: { content?: unknown }): string | undefined {
  const content = result.content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  const block: unknown = content[0];
  return isRecord(block) && block.type === 'text' && typeof block.text === 'string'
    ? block.text
    : undefined;
}

/**
 * What an operator sees as `last_error` for a transient `isError` answer: the first text block,
 * cut to 500 chars, so a retried failure still says why.
 */
export function lastErrorText(result: { content?: unknown }, fallback: string): string {
  return cutText(firstText(result) ?? fallback, LAST_ERROR_CHARS);
}

/**
 * `progress` is optional `{current?, total?, message?}`: numbers finite, message a string cut to
 * 500 chars. Unknown members are dropped rather than stored, since consumers see this object.
 */
export function parseProgress(value: unknown, what: string): TaskProgress {
  if (!isRecord(value))
    throw protocolError(`${what} must be an object {current?, total?, message?}`);
  const progress: TaskProgress = {};
  for (const key of ['current', 'total'] as const) {
    const item = value[key];
    if (item === undefined || item === null) continue;
    if (typeof item !== 'number' || !Number.isFinite(item)) {
      throw protocolError(`${what}.${key} must be a finite number`);
    }
    progress[key] = item;
  }
  if (value.message !== undefined && value.message !== null) {
    if (typeof value.message !== 'string') throw protocolError(`${what}.message must be a string`);
    progress.message = cutText(value.message, PROGRESS_MESSAGE_CHARS);
  }
  return progress;
}

/**
 * A poll hint in seconds, validated and converted to ms. Clamping to [MIN_POLL_INTERVAL_MS, 24 h]
 * is the poller's job; a hint that is not a finite positive number is a contract break.
 */
export function pollHintMs(value: unknown, unitMs: number, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw protocolError(`${what} must be a finite number > 0`);
  }
  return value * unitMs;
}

/**
 * A remote task ID must be a string of 1..255 chars: it is stored and sent back verbatim, so it
 * must not hold U+0000 or a lone UTF-16 surrogate either (Postgres cannot store them exactly,
 * and a replaced ID names another task; docs/leases.md, "Unstorable text").
 */
export function remoteIdProblem(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string';
  const unstorable = unstorableTextProblem(value);
  if (unstorable) return unstorable;
  if (value.length > REMOTE_TASK_ID_MAX_CHARS) {
    return `is ${value.length} chars, over the ${REMOTE_TASK_ID_MAX_CHARS}-char bound`;
  }
  return null;
}

/**
 * The remote ID to cancel after a submit answer broke the contract: the upstream may have started
 * work the gateway cannot track, so a non-empty string ID found in the answer is cancelled
 * (best effort). Rejections (`submit_rejected`) started nothing and return null.
 */
export function strayRemoteId(error: unknown, candidate: unknown): string | null {
  const broken = error instanceof PermanentTaskError && error.code === TaskErrorCode.ProtocolError;
  return broken && typeof candidate === 'string' && candidate !== '' ? candidate : null;
}
