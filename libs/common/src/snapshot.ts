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
  /**
   * When a task still active is past the upstream's promise to keep it (2026-07-28:
   * `createdAt + ttlMs`; 2025-11-25: `createdAt + ttl`; ms since the epoch), where it gave one.
   * An upstream does not push the expiry, so a pushed task's safety poll comes no later
   * (docs/connections.md, "Push").
   */
  backstopAtMs?: number;
}
