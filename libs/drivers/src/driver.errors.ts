import { PermanentTaskError, TaskErrorCode } from '@app/common';

/**
 * The poller aborted a driver call through `DriverContext.signal` (cancel of a held call, lease
 * lost, shutdown). Only the poller knows which, so it decides the task's fate: a sync-call cancel
 * ends the task `cancelled`, a lost lease discards the outcome, a shutdown releases the claim.
 */
export class CallAbortedError extends Error {
  override readonly name = 'CallAbortedError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A contract break: permanent, code `protocol_error`, and a message that names the broken rule
 * (for example `status: "task_id" must equal the submitted task's ID`) so the upstream's author
 * can fix it from the task's error alone.
 */
export function protocolError(rule: string, cause?: unknown): PermanentTaskError {
  return new PermanentTaskError(
    TaskErrorCode.ProtocolError,
    rule,
    cause === undefined ? undefined : { cause },
  );
}
