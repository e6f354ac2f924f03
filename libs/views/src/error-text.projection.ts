import {
  DATABASE_ERROR_PREFIX,
  ERROR_MESSAGE_SHOWN_CHARS,
  TaskErrorCode,
  TaskStatus,
  cutText,
} from '@app/common';
import type { TaskRow } from '@app/persistence';

/**
 * What a consumer reads about a failure (docs/api.md, "Errors of a task"). The stored
 * `error_message` and `last_error` are written for operators: they name servers, remote task IDs,
 * worker IDs, URLs, command paths and whatever an upstream or a driver said. None of that is shown.
 * A consumer sees a fixed sentence per error code, and per class of transient error; the
 * upstream's own words appear only where the contract makes them the failure's description
 * (`submit_rejected`, `upstream_failed`), and then scrubbed.
 */
export const ERROR_TEMPLATES: Readonly<Record<TaskErrorCode, string>> = {
  [TaskErrorCode.SubmitRejected]: 'The upstream server refused the task.',
  [TaskErrorCode.ProtocolError]:
    "The upstream server's answer broke its contract with the gateway, so the task could not be tracked.",
  [TaskErrorCode.UpstreamFailed]: 'The upstream server reported that the task failed.',
  [TaskErrorCode.UpstreamTaskLost]:
    'The upstream server no longer knows the task (it expired or was purged, or the session or process holding it ended).',
  [TaskErrorCode.OutcomeUncertain]:
    'Whether the upstream server started or finished the task is unknown: the work was sent, the worker handling it stopped before recording the answer, and the tool is not declared safe to repeat.',
  [TaskErrorCode.TrackingTimeout]:
    'The gateway stopped tracking the task: the upstream server gave no successful status answer for too long.',
  [TaskErrorCode.ToolsetRemoved]:
    "The task's toolset was removed from the gateway's configuration before the task could be submitted.",
  [TaskErrorCode.FailedByOperator]: "The gateway's operators ended the task.",
  [TaskErrorCode.DeadlineExceeded]:
    "The task did not end within its toolset's deadline, so the gateway cancelled it.",
};

/** Codes whose stored message is the upstream's own description of the failure. */
const UPSTREAM_WORDS: ReadonlySet<string> = new Set([
  TaskErrorCode.SubmitRejected,
  TaskErrorCode.UpstreamFailed,
]);

const UNKNOWN_CODE_TEXT = 'The task failed.';

/** Classes of transient error, told apart by the gateway's own fixed wording of each. */
export enum TransientClass {
  Unreachable = 'unreachable',
  Timeout = 'timeout',
  NotConfigured = 'not_configured',
  UpstreamError = 'upstream_error',
  Database = 'database',
  TooLarge = 'too_large',
}

const TRANSIENT_TEMPLATES: Readonly<Record<TransientClass, string>> = {
  [TransientClass.Unreachable]: 'The upstream server could not be reached',
  [TransientClass.Timeout]: 'The upstream server did not answer in time',
  [TransientClass.NotConfigured]: "The task's toolset is not configured on any worker right now",
  [TransientClass.UpstreamError]: 'The upstream server answered with an error',
  [TransientClass.Database]: "The gateway could not store the task's state",
  [TransientClass.TooLarge]: 'The upstream server sent an answer too large to read',
};

/**
 * The gateway's wording of connection-layer and runner failures (libs/upstream upstream.errors,
 * the poller's runner). Anything unrecognised falls to `upstream_error`, whose sentence carries
 * nothing of the stored text: a new wording can only make a sentence less precise, never leak.
 */
const TRANSIENT_PATTERNS: ReadonlyArray<[RegExp, TransientClass]> = [
  // First: a database failure's text may hold words of the others ("timeout", "connection").
  [new RegExp(`^${DATABASE_ERROR_PREFIX}`), TransientClass.Database],
  // The message bound's own wording (libs/upstream message-bound.ts), inside any wrapping.
  [/\(maxMessageBytes\); it was refused/, TransientClass.TooLarge],
  [/did not answer within|timed? ?out|ETIMEDOUT/i, TransientClass.Timeout],
  [/not in this worker's mcpServers config|now belongs to server/i, TransientClass.NotConfigured],
  [
    /^submit not sent|^server "[^"]*" is \w+|connection closed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EPIPE|socket|fetch failed|no longer knows the session|not listed yet/i,
    TransientClass.Unreachable,
  ],
];

/** Which class of transient error a stored `last_error` is. */
export function transientClass(lastError: string): TransientClass {
  for (const [pattern, kind] of TRANSIENT_PATTERNS) if (pattern.test(lastError)) return kind;
  return TransientClass.UpstreamError;
}

/** The task's failure as a consumer reads it, or null when it has none. */
export function consumerError(row: TaskRow): { code: string; message: string } | null {
  if (row.errorCode === null) return null;
  const code = row.errorCode;
  const template: string | undefined = (ERROR_TEMPLATES as Record<string, string>)[code];
  let message = template ?? UNKNOWN_CODE_TEXT;
  if (code === (TaskErrorCode.TrackingTimeout as string)) {
    const silent = /no successful poll for (\d+) s/.exec(row.errorMessage ?? '');
    if (silent) message = message.replace('for too long', `for ${silent[1]} s`);
  }
  if (code === (TaskErrorCode.DeadlineExceeded as string)) {
    // The trigger's fixed wording (migrations/…-TaskDeadlines): only the number is taken.
    const limit = /no end within (\d+) s of submit/.exec(row.errorMessage ?? '');
    if (limit) message = message.replace('deadline,', `deadline (${limit[1]} s after submit),`);
  }
  if (UPSTREAM_WORDS.has(code) && row.errorMessage) {
    const detail = scrubUpstreamText(row.errorMessage, row);
    if (detail) message = `${message.slice(0, -1)}: ${detail}`;
  }
  return { code, message: cutText(message, ERROR_MESSAGE_SHOWN_CHARS) };
}

/**
 * The last transient error as a consumer reads it: its class and what the gateway was doing,
 * never the stored text. A queued task of an unavailable toolset says it waits.
 */
export function consumerLastError(row: TaskRow, toolsetUnavailable: boolean): string | null {
  if (row.lastError !== null) {
    const what = TRANSIENT_TEMPLATES[transientClass(row.lastError)];
    return `${what} ${doing(row)}; the gateway retries with backoff.`;
  }
  if (row.status === TaskStatus.Queued && toolsetUnavailable) {
    return `Toolset ${row.toolset} is unavailable right now; the task waits until it is available.`;
  }
  return null;
}

function doing(row: TaskRow): string {
  if (row.cancelRequestedAt !== null) return 'while the gateway was cancelling the task';
  if (row.status === TaskStatus.Queued) return 'while the gateway was submitting the task';
  return "while the gateway was checking the task's status";
}

const REDACTED = '[redacted]';

/**
 * The upstream's own words with everything internal taken out: the internal values the row
 * knows (remote task and session IDs, server, workers), the gateway's `server "…" answered
 * error N:` wrapping, and anything shaped like a URL, an address, a file path or an opaque ID.
 */
export function scrubUpstreamText(text: string, row: Partial<TaskRow>): string {
  let out = text.replace(/^server "[^"]*" (answered error -?\d+|sent an invalid answer): */, '');
  const known = [
    row.remoteTaskId,
    row.remoteSessionId,
    row.server,
    row.pinnedWorkerId,
    row.leaseOwner,
  ].filter((value): value is string => typeof value === 'string' && value.length >= 3);
  for (const value of known.sort((a, b) => b.length - a.length))
    out = out.split(value).join(REDACTED);
  out = out
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, REDACTED) // URLs
    .replace(/\[?\b(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}\]?/gi, REDACTED) // IPv6
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, REDACTED) // IPv4
    .replace(/(?:[A-Za-z]:)?(?:[\\/][\w.@~-]+){2,}[\\/]?/g, REDACTED) // paths
    .replace(/\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{12,}\b/g, REDACTED); // opaque IDs
  return out.trim();
}
