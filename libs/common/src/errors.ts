import { TaskErrorCode } from './task.enums';

/**
 * A failure that ends a task: the upstream cannot heal it by retrying. Carries the
 * consumer-visible code and a message that names the broken rule.
 */
export class PermanentTaskError extends Error {
  override readonly name = 'PermanentTaskError';
  constructor(
    readonly code: TaskErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A failure worth retrying with backoff; the message becomes the task's `last_error`. */
export class TransientTaskError extends Error {
  override readonly name = 'TransientTaskError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A fenced write changed no row: the claim's lease expired or was taken over. */
export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
  constructor(readonly taskId: string) {
    super(`lease lost on ${taskId}`);
  }
}

/** Raised by config loaders; the message names the variable or field and the rule, never the value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * The abort reason of an attempt whose deadline passed (leases.md, "Attempt deadlines"): the
 * attempt must end a safety margin before its lease does. Unlike the poller's other aborts it
 * is a timeout: the connection layer turns it into a typed error that says whether the request
 * may have been sent, and the drivers classify that like any timeout.
 */
export class AttemptDeadlineError extends Error {
  override readonly name = 'AttemptDeadlineError';
  constructor(readonly budgetMs: number) {
    super(`the attempt's deadline passed (${budgetMs} ms, ending before its lease)`);
  }
}

/** True when `signal` was aborted by the attempt's deadline. */
export function isAttemptDeadline(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && signal.reason instanceof AttemptDeadlineError;
}

/**
 * How a task's `last_error` begins when the failure was the gateway's own database (a refused or
 * lost write), not the upstream: the API's view tells the two apart by it and never shows a
 * database failure as the upstream's (docs/api.md, "Errors of a task").
 */
export const DATABASE_ERROR_PREFIX = 'gateway database: ';
