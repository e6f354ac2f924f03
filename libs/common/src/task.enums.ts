/** The local status model of contracts.md. Terminal statuses never change again. */
export enum TaskStatus {
  Queued = 'queued',
  Working = 'working',
  InputRequired = 'input_required',
  Completed = 'completed',
  Failed = 'failed',
  Cancelled = 'cancelled',
}

export const TERMINAL_STATUSES: readonly TaskStatus[] = [
  TaskStatus.Completed,
  TaskStatus.Failed,
  TaskStatus.Cancelled,
];

export const ACTIVE_STATUSES: readonly TaskStatus[] = [
  TaskStatus.Queued,
  TaskStatus.Working,
  TaskStatus.InputRequired,
];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** The upstream contracts a toolset can bind (contracts.md). */
export enum Contract {
  Ordinary = 'ordinary',
  McpTasks = 'mcp-tasks',
  SyncCall = 'sync-call',
}

/** What a claim is for; follows from the row (leases.md). */
export enum Phase {
  Submit = 'submit',
  Poll = 'poll',
  Cancel = 'cancel',
}

/** Machine-readable failure codes shown to consumers as `error.code`. */
export enum TaskErrorCode {
  SubmitRejected = 'submit_rejected',
  ProtocolError = 'protocol_error',
  UpstreamFailed = 'upstream_failed',
  UpstreamTaskLost = 'upstream_task_lost',
  OutcomeUncertain = 'outcome_uncertain',
  TrackingTimeout = 'tracking_timeout',
  /** A queued task's toolset is configured on no live worker, for REMOVED_TOOLSET_GRACE_MS. */
  ToolsetRemoved = 'toolset_removed',
  /** An operator ended the task (`npm run admin -- fail`, docs/operations.md). */
  FailedByOperator = 'failed_by_operator',
  /**
   * The task outlived its toolset's `deadlineSeconds`; the gateway cancelled the upstream work
   * (docs/contracts.md, "Deadlines"). Not `tracking_timeout`, which is about failing polls.
   */
  DeadlineExceeded = 'deadline_exceeded',
}
