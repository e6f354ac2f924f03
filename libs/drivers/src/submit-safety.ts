import {
  PermanentTaskError,
  TaskErrorCode,
  TransientTaskError,
  isAttemptDeadline,
} from '@app/common';
import type { ToolsetConfig } from '@app/config';
import { UpstreamError, UpstreamProtocolError, UpstreamRpcError } from '@app/upstream';
import { CallAbortedError, protocolError } from './driver.errors';

/**
 * Aborted by the poller for a reason only it knows (cancel, lease lost, shutdown). The attempt's
 * deadline is not such an abort: it is a timeout, and the connection layer's
 * `UpstreamDeadlineError` says whether the request may have been sent, so it is classified below
 * like any timeout (docs/leases.md, "Attempt deadlines").
 */
function pollerAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true && !isAttemptDeadline(signal);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Classifies a failed submit (or a held sync call) by what the upstream may have seen
 * (contracts.md, "Rules for every contract"):
 * - aborted by the poller → {@link CallAbortedError} (the poller knows why); the attempt's
 *   deadline is a timeout instead, classified by what may have been sent;
 * - a JSON-RPC error → `submit_rejected`: the upstream saw the request and refused it;
 * - an answer that is not valid MCP → `protocol_error` (it answered, so repeating is unsafe too);
 * - nothing sent (`maybeSent` false) → transient, retried with backoff;
 * - maybe sent, no answer (timeout, connection lost) → `outcome_uncertain`, unless the operator
 *   declared the tool safe to repeat (`retryOnCrash`) → transient.
 * An error of unknown kind is treated as maybe sent: repeating a submit silently is the one
 * mistake this rule exists to prevent.
 */
export function classifySubmitError(
  error: unknown,
  toolset: Pick<ToolsetConfig, 'retryOnCrash'>,
  signal?: AbortSignal,
): Error {
  if (error instanceof PermanentTaskError || error instanceof TransientTaskError) return error;
  if (error instanceof CallAbortedError) return error;
  if (pollerAborted(signal))
    return new CallAbortedError(`submit aborted: ${describe(error)}`, { cause: error });
  if (error instanceof UpstreamRpcError) {
    return new PermanentTaskError(TaskErrorCode.SubmitRejected, error.message, { cause: error });
  }
  if (error instanceof UpstreamProtocolError)
    return protocolError(`submit: ${error.message}`, error);
  if (error instanceof UpstreamError && !error.maybeSent) {
    return new TransientTaskError(`submit not sent: ${error.message}`, { cause: error });
  }
  const why = `submit may have reached the upstream without an answer: ${describe(error)}`;
  if (toolset.retryOnCrash) return new TransientTaskError(why, { cause: error });
  return new PermanentTaskError(TaskErrorCode.OutcomeUncertain, why, { cause: error });
}

/**
 * Classifies a failed status poll or cancel: typed task errors pass through, an abort becomes
 * {@link CallAbortedError}, an answer that is not valid MCP is a `protocol_error`, everything
 * else (unavailable, timeout, connection, RPC errors, bugs) is transient: polls and cancels are idempotent, so retrying with backoff is always safe, and
 * `tracking_timeout` bounds how long.
 */
export function classifyPollError(error: unknown, what: string, signal?: AbortSignal): Error {
  if (error instanceof PermanentTaskError || error instanceof TransientTaskError) return error;
  if (error instanceof CallAbortedError) return error;
  if (pollerAborted(signal))
    return new CallAbortedError(`${what} aborted: ${describe(error)}`, { cause: error });
  if (error instanceof UpstreamProtocolError)
    return protocolError(`${what}: ${error.message}`, error);
  return new TransientTaskError(`${what} failed: ${describe(error)}`, { cause: error });
}
