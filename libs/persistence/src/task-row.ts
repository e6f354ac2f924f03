import { Contract, TaskStatus } from '@app/common';

/** One answer to a task's question, as stored; the times are ISO strings (jsonb). */
export interface StoredAnswer {
  response: unknown;
  received_at: string;
  /** Set, fenced, by the poller just before it sends the answer upstream. */
  sent_at?: string;
  /** Set, fenced, once the upstream acknowledged it. */
  delivered_at?: string;
}

/** A whole stored task in camelCase. Internal: the API projects it through a whitelist. */
export interface TaskRow {
  id: string;
  userId: string;
  threadId: string;
  toolset: string;
  contract: Contract;
  server: string;
  status: TaskStatus;
  input: unknown;
  metadata: Record<string, unknown> | null;
  idempotencyKey: string | null;
  requestHash: string | null;
  remoteTaskId: string | null;
  remoteSessionId: string | null;
  remoteProtocolVersion: string | null;
  driverState: Record<string, unknown> | null;
  pinnedWorkerId: string | null;
  submitStartedAt: Date | null;
  submitAttempts: number;
  result: unknown;
  resultPreview: string | null;
  resultTruncated: boolean;
  resultArtifact: unknown;
  inputRequired: unknown;
  /** Answers by request key (task-input.repository.ts); null before the first. */
  inputResponses: Record<string, StoredAnswer> | null;
  progress: unknown;
  /** The submit's W3C trace context (`traceparent`, `tracestate`); null when tracing was off. */
  traceContext: Record<string, string> | null;
  errorCode: string | null;
  errorMessage: string | null;
  lastError: string | null;
  consecutiveErrors: number;
  pollCount: number;
  lastSuccessAt: Date | null;
  cancelRequestedAt: Date | null;
  /** 'deadline' when the deadline sweep asked for the cancel; null for a consumer's cancel. */
  cancelReason: 'deadline' | null;
  /** Submit time + the toolset's `deadlineSeconds`; null when the toolset has no deadline. */
  deadlineAt: Date | null;
  eventSeq: number;
  createdAt: Date;
  updatedAt: Date;
  submittedAt: Date | null;
  completedAt: Date | null;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  nextAttemptAt: Date | null;
}

export function toTaskRow(row: Record<string, unknown>): TaskRow {
  return {
    id: row.id as string,
    userId: row.user_id as string,
    threadId: row.thread_id as string,
    toolset: row.toolset as string,
    contract: row.contract as Contract,
    server: row.server as string,
    status: row.status as TaskStatus,
    input: row.input,
    metadata: row.metadata as Record<string, unknown> | null,
    idempotencyKey: row.idempotency_key as string | null,
    requestHash: row.request_hash as string | null,
    remoteTaskId: row.remote_task_id as string | null,
    remoteSessionId: row.remote_session_id as string | null,
    remoteProtocolVersion: row.remote_protocol_version as string | null,
    driverState: row.driver_state as Record<string, unknown> | null,
    pinnedWorkerId: row.pinned_worker_id as string | null,
    submitStartedAt: row.submit_started_at as Date | null,
    submitAttempts: row.submit_attempts as number,
    result: row.result,
    resultPreview: row.result_preview as string | null,
    resultTruncated: row.result_truncated as boolean,
    resultArtifact: row.result_artifact,
    inputRequired: row.input_required,
    inputResponses: (row.input_responses ?? null) as Record<string, StoredAnswer> | null,
    progress: row.progress,
    traceContext: (row.trace_context ?? null) as Record<string, string> | null,
    errorCode: row.error_code as string | null,
    errorMessage: row.error_message as string | null,
    lastError: row.last_error as string | null,
    consecutiveErrors: row.consecutive_errors as number,
    pollCount: row.poll_count as number,
    lastSuccessAt: row.last_success_at as Date | null,
    cancelRequestedAt: row.cancel_requested_at as Date | null,
    cancelReason: (row.cancel_reason ?? null) as 'deadline' | null,
    deadlineAt: (row.deadline_at ?? null) as Date | null,
    eventSeq: row.event_seq as number,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
    submittedAt: row.submitted_at as Date | null,
    completedAt: row.completed_at as Date | null,
    leaseOwner: row.lease_owner as string | null,
    leaseExpiresAt: row.lease_expires_at as Date | null,
    nextAttemptAt: row.next_attempt_at as Date | null,
  };
}
