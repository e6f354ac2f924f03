import { TaskErrorCode, TaskStatus, type TaskSnapshot } from '@app/common';
import { boundResult } from './bound-result';
import type { ResultLimits } from './contract-driver';
import { boundErrorMessage, firstText } from './snapshot-fields';

/**
 * The terminal snapshot of a task whose outcome is a CallToolResult, the same on every contract
 * (contracts.md, "Tool errors"): the result is stored under the result bound without its `_meta`;
 * `isError: true` ends the task `failed` / `upstream_failed` with the first text block as the
 * message and the result kept, so a consumer gets the tool's own content and `isError` back.
 */
export function toolResultSnapshot(
  result: Record<string, unknown>,
  limits: ResultLimits,
  what: string,
  failedMessage?: string,
): TaskSnapshot {
  const { _meta: _dropped, ...stored } = result;
  const bounded = boundResult(stored, limits, what);
  if (result.isError !== true && failedMessage === undefined) {
    return { status: TaskStatus.Completed, result: bounded };
  }
  const text = result.isError === true ? firstText(result) : undefined;
  const parts = [failedMessage, text].filter((part): part is string => !!part);
  const message = parts.length > 0 ? parts.join(': ') : 'the tool answered isError without text';
  return {
    status: TaskStatus.Failed,
    result: bounded,
    error: { code: TaskErrorCode.UpstreamFailed, message: boundErrorMessage(message) },
  };
}
