import { TaskSnapshot, TaskStatus } from '@app/common';
import { RemoteHandle } from './claimed-task';
import { jsonParam } from './database';
import { APPLY_POLL, FINISH, SUBMITTED_COLUMNS } from './sql/attempt-write.sql';

/*
 * The named values of the attempt's group-committed writes (sql/attempt-write.sql.ts), built from
 * what the driver answered: one object per write, the same whether it is sent row by row or in a
 * batch (write-path.ts).
 */

/** The values of a terminal write (FINISH); `guarded`: not once a cancel is pending. */
export function terminalValues(
  snapshot: TaskSnapshot,
  guarded: boolean,
): Record<(typeof FINISH.columns)[number], unknown> {
  return {
    new_status: snapshot.status,
    has_result: snapshot.result !== undefined,
    new_result: jsonParam(snapshot.result?.value),
    new_preview: snapshot.result?.preview ?? null,
    new_truncated: snapshot.result?.truncated ?? false,
    new_artifact: jsonParam(snapshot.resultArtifact),
    has_progress: snapshot.progress !== undefined,
    new_progress: jsonParam(snapshot.progress),
    new_error_code: snapshot.error?.code ?? null,
    new_error_message: snapshot.error?.message ?? null,
    has_guard: guarded,
  };
}

/** The values of a handle write (SUBMITTED). */
export function submittedValues(
  handle: RemoteHandle,
  snapshot: TaskSnapshot | undefined,
  nextDelayMs: number,
): Record<keyof typeof SUBMITTED_COLUMNS, unknown> {
  const status =
    snapshot?.status === TaskStatus.InputRequired ? TaskStatus.InputRequired : TaskStatus.Working;
  return {
    new_status: status,
    new_remote_task_id: handle.remoteTaskId,
    new_remote_session_id: handle.sessionId ?? null,
    new_protocol_version: handle.protocolVersion ?? null,
    new_driver_state: jsonParam(handle.driverState),
    new_pinned_worker_id: handle.pinnedWorkerId ?? null,
    delay_ms: nextDelayMs,
    new_input_required: jsonParam(
      status === TaskStatus.InputRequired ? snapshot?.inputRequired : null,
    ),
  };
}

/** The values of a poll's non-terminal write (APPLY_POLL), due again after `nextDelayMs`. */
export function pollValues(
  snapshot: TaskSnapshot,
  nextDelayMs: number,
): Record<(typeof APPLY_POLL.columns)[number], unknown> {
  return {
    new_status: snapshot.status,
    has_progress: snapshot.progress !== undefined,
    new_progress: jsonParam(snapshot.progress),
    new_input_required: jsonParam(
      snapshot.status === TaskStatus.InputRequired ? snapshot.inputRequired : null,
    ),
    delay_ms: nextDelayMs,
  };
}
