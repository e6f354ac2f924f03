import type { TaskProgress, TaskSnapshot } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import type { RemoteHandle } from '@app/persistence';

/** Bounds from settings (contracts.md, "What the gateway stores"). */
export interface ResultLimits {
  maxResultBytes: number;
  previewChars: number;
}

/** What a driver may know about the task it acts on. Never more than this. */
export interface DriverTask {
  id: string;
  input: unknown;
  remoteTaskId: string | null;
  remoteSessionId: string | null;
  remoteProtocolVersion: string | null;
  driverState: Record<string, unknown> | null;
}

export interface DriverContext {
  task: DriverTask;
  toolset: ToolsetConfig;
  server: ServerConfig;
  workerId: string;
  limits: ResultLimits;
  /** Aborted on lease loss, cancel of a held call, or shutdown. */
  signal: AbortSignal;
  /** sync-call: progress of the held call, already bounded. */
  onProgress?: (progress: TaskProgress) => void;
}

export interface SubmitOutcome {
  /** The remote handle; for sync-call a local marker, since the call itself is the task. */
  handle: RemoteHandle;
  /** A first snapshot; for sync-call the terminal one. */
  snapshot?: TaskSnapshot;
}

/**
 * One upstream contract behind the poller's three operations. Failures are thrown as
 * `PermanentTaskError` (ends the task with its code) or `TransientTaskError` (retried with
 * backoff); a submit that may have reached the upstream without an answer is permanent
 * (`outcome_uncertain`) unless the toolset sets `retryOnCrash`.
 */
export interface ContractDriver {
  submit(ctx: DriverContext): Promise<SubmitOutcome>;
  poll(ctx: DriverContext): Promise<TaskSnapshot>;
  /** Asks the upstream to cancel; resolves with the task's real final state. */
  cancel(ctx: DriverContext): Promise<TaskSnapshot>;
}
