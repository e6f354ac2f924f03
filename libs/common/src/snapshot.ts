import { TaskErrorCode, TaskStatus } from './task.enums';

/** Consumer-visible progress (contracts.md: our extension of `ordinary`). */
export interface TaskProgress {
  current?: number;
  total?: number;
  message?: string;
}

/** A result after the bounds table: either the JSON itself or a preview of it. */
export interface BoundedResult {
  /** The compact JSON value, or null when it was over MAX_RESULT_BYTES. */
  value: unknown;
  preview: string | null;
  truncated: boolean;
}

export interface ResultArtifact {
  uri: string;
  mime_type: string;
}

/**
 * What a driver learned about the upstream task, normalized and bounded. Absent fields leave
 * the stored value unchanged; `null` clears it.
 */
export interface TaskSnapshot {
  status: Exclude<TaskStatus, TaskStatus.Queued>;
  result?: BoundedResult;
  resultArtifact?: ResultArtifact | null;
  inputRequired?: unknown;
  progress?: TaskProgress | null;
  /** For `failed` (and `cancelled` with a reason): code and bounded message. */
  error?: { code: TaskErrorCode; message: string };
  /** The upstream's hint for the next poll, before clamping. */
  pollAfterMs?: number;
}
