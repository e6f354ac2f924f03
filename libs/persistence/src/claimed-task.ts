import { Contract, Phase, TaskStatus } from '@app/common';

/** The right to write about one task row: fenced by `token`, valid until the lease expires. */
export interface TaskLease {
  taskId: string;
  token: string;
}

/** A row as the claim returned it, with what the caller needs to act and to measure. */
export interface ClaimedTask {
  lease: TaskLease;
  phase: Phase;
  /** The previous lease expired: a crashed or stalled worker's claim taken over. */
  rescued: boolean;
  dueLagSeconds: number;
  dbNow: Date;
  id: string;
  userId: string;
  threadId: string;
  toolset: string;
  contract: Contract;
  server: string;
  status: TaskStatus;
  input: unknown;
  metadata: Record<string, unknown> | null;
  remoteTaskId: string | null;
  remoteSessionId: string | null;
  remoteProtocolVersion: string | null;
  driverState: Record<string, unknown> | null;
  pinnedWorkerId: string | null;
  submitStartedAt: Date | null;
  submitAttempts: number;
  consecutiveErrors: number;
  pollCount: number;
  lastSuccessAt: Date | null;
  submittedAt: Date | null;
  createdAt: Date;
  cancelRequestedAt: Date | null;
}

type Row = Record<string, unknown>;

export function toClaimedTask(row: Row): ClaimedTask {
  return {
    lease: { taskId: row.id as string, token: row.lease_token as string },
    phase: row.phase as Phase,
    rescued: row.rescued as boolean,
    dueLagSeconds: Number(row.due_lag_seconds),
    dbNow: row.db_now as Date,
    id: row.id as string,
    userId: row.user_id as string,
    threadId: row.thread_id as string,
    toolset: row.toolset as string,
    contract: row.contract as Contract,
    server: row.server as string,
    status: row.status as TaskStatus,
    input: row.input,
    metadata: row.metadata as Record<string, unknown> | null,
    remoteTaskId: row.remote_task_id as string | null,
    remoteSessionId: row.remote_session_id as string | null,
    remoteProtocolVersion: row.remote_protocol_version as string | null,
    driverState: row.driver_state as Record<string, unknown> | null,
    pinnedWorkerId: row.pinned_worker_id as string | null,
    submitStartedAt: row.submit_started_at as Date | null,
    submitAttempts: row.submit_attempts as number,
    consecutiveErrors: row.consecutive_errors as number,
    pollCount: row.poll_count as number,
    lastSuccessAt: row.last_success_at as Date | null,
    submittedAt: row.submitted_at as Date | null,
    createdAt: row.created_at as Date,
    cancelRequestedAt: row.cancel_requested_at as Date | null,
  };
}
