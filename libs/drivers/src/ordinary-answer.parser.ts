import {
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
  isRecord,
  type ResultArtifact,
  type TaskSnapshot,
} from '@app/common';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { questionAsRequests } from './input-requests';
import { boundJsonField, boundResult } from './bound-result';
import type { ResultLimits } from './contract-driver';
import { protocolError } from './driver.errors';
import {
  boundErrorMessage,
  firstText,
  lastErrorText,
  parseProgress,
  pollHintMs,
} from './snapshot-fields';

/** Upstream status words of the `ordinary` contract and their local meaning. */
const STATUS_MAP: Record<string, TaskSnapshot['status']> = {
  running: TaskStatus.Working,
  input_required: TaskStatus.InputRequired,
  completed: TaskStatus.Completed,
  failed: TaskStatus.Failed,
  cancelled: TaskStatus.Cancelled,
};
const CANCEL_FINAL = ['cancelled', 'completed', 'failed'];

/** Only structuredContent is the protocol; text is for humans and never parsed. */
function structured(result: CallToolResult, op: string, shape: string): Record<string, unknown> {
  if (!isRecord(result.structuredContent)) {
    throw protocolError(
      `${op}: the result must carry structuredContent ${shape} (text content is never parsed)`,
    );
  }
  return result.structuredContent;
}

/**
 * The submit answer: `{task_id: string, status: "running"}`; `isError` means the upstream saw the
 * submit and refused it. Returns the remote ID, whose 255-char bound the driver checks (it must
 * cancel an over-long one, which needs the session).
 */
export function parseSubmitAnswer(result: CallToolResult): string {
  if (result.isError === true) {
    const text = firstText(result) ?? 'the submit tool answered isError without text';
    throw new PermanentTaskError(TaskErrorCode.SubmitRejected, boundErrorMessage(text));
  }
  const answer = structured(result, 'submit', '{task_id, status: "running"}');
  if (typeof answer.task_id !== 'string' || answer.task_id.length === 0) {
    throw protocolError('submit: "task_id" must be a non-empty string');
  }
  if (answer.status !== 'running') throw protocolError('submit: "status" must be "running"');
  return answer.task_id;
}

/**
 * A status (or cancel) answer as a snapshot. `isError` is transient (the first text block becomes
 * `last_error`); `error_code: "task_not_found"` means the upstream lost the task; any other break
 * of the table in contracts.md is a `protocol_error` naming the rule. Unknown fields are ignored.
 */
export function parseStatusAnswer(
  result: CallToolResult,
  remoteTaskId: string,
  limits: ResultLimits,
  op: 'status' | 'cancel' = 'status',
): TaskSnapshot {
  if (result.isError === true) {
    throw new TransientTaskError(lastErrorText(result, `${op} tool answered isError without text`));
  }
  const answer = structured(result, op, '{task_id, status, ...}');
  const upstreamError = answer.error ?? undefined;
  if (upstreamError !== undefined && typeof upstreamError !== 'string') {
    throw protocolError(`${op}: "error" must be a string`);
  }
  if (answer.error_code === 'task_not_found') {
    throw new PermanentTaskError(
      TaskErrorCode.UpstreamTaskLost,
      boundErrorMessage(
        `upstream no longer knows task ${remoteTaskId}: ${upstreamError ?? 'task_not_found'}`,
      ),
    );
  }
  if (answer.task_id !== remoteTaskId) {
    throw protocolError(`${op}: "task_id" must equal the submitted task's ID`);
  }
  const word = answer.status;
  const status =
    typeof word === 'string' && Object.hasOwn(STATUS_MAP, word) ? STATUS_MAP[word] : undefined;
  if (status === undefined) {
    throw protocolError(
      `${op}: "status" must be one of running, input_required, completed, failed, cancelled`,
    );
  }
  if (op === 'cancel' && !CANCEL_FINAL.includes(word as string)) {
    throw protocolError(`cancel: "status" must be the final state: cancelled, completed or failed`);
  }
  return buildSnapshot(answer, status, upstreamError, limits, op);
}

function buildSnapshot(
  answer: Record<string, unknown>,
  status: TaskSnapshot['status'],
  upstreamError: string | undefined,
  limits: ResultLimits,
  op: string,
): TaskSnapshot {
  const snapshot: TaskSnapshot = { status };
  const present = (key: string): boolean => answer[key] !== undefined && answer[key] !== null;
  if (status === TaskStatus.InputRequired) {
    if (!isRecord(answer.input_required)) {
      throw protocolError(
        `${op}: "input_required" must be an object when status is "input_required"`,
      );
    }
    snapshot.inputRequired = questionAsRequests(answer.input_required, `${op}: "input_required"`);
  } else {
    snapshot.inputRequired = null;
  }
  // Validated whatever the status: a malformed field is a break even where it is not used.
  const artifact = present('result_artifact')
    ? parseArtifact(answer.result_artifact, op)
    : undefined;
  if (present('progress')) snapshot.progress = parseProgress(answer.progress, `${op}: "progress"`);
  if (present('poll_after_seconds')) {
    snapshot.pollAfterMs = pollHintMs(
      answer.poll_after_seconds,
      1000,
      `${op}: "poll_after_seconds"`,
    );
  }
  const terminal = status !== TaskStatus.Working && status !== TaskStatus.InputRequired;
  if (terminal) {
    if (Object.hasOwn(answer, 'result'))
      snapshot.result = boundResult(answer.result, limits, `${op}: "result"`);
    if (artifact) snapshot.resultArtifact = artifact;
  }
  if (status === TaskStatus.Failed) {
    snapshot.error = {
      code: TaskErrorCode.UpstreamFailed,
      message: boundErrorMessage(
        upstreamError ?? 'the upstream reported failure without a message',
      ),
    };
  }
  return snapshot;
}

function parseArtifact(value: unknown, op: string): ResultArtifact {
  const rule = `${op}: "result_artifact" must be {uri, mime_type} with both non-empty strings`;
  if (!isRecord(value)) throw protocolError(rule);
  const { uri, mime_type } = value;
  if (typeof uri !== 'string' || uri === '' || typeof mime_type !== 'string' || mime_type === '') {
    throw protocolError(rule);
  }
  boundJsonField({ uri, mime_type }, `${op}: "result_artifact"`);
  return { uri, mime_type };
}
