import type { RemoteHandle, TaskProgress, TaskSnapshot } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';

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
  /**
   * The remote handle; for sync-call a local marker, since the call itself is the task. Absent
   * when the upstream answered at once and made no task: `snapshot` is then final.
   */
  handle?: RemoteHandle;
  /** A first snapshot; for sync-call (and an answer without a task) the terminal one. */
  snapshot?: TaskSnapshot;
}

/** A consumer's answers to a task's questions, not yet confirmed delivered. */
export interface PendingAnswers {
  /** By request key: the response as the consumer sent it. */
  responses: Record<string, unknown>;
  /** Keys a previous attempt may have sent already (it stopped before confirming). */
  uncertain: string[];
  /** Marks keys as sent, durably and fenced: call it right before sending them, and only then. */
  beforeSend(keys: string[]): Promise<void>;
}

/** What `answer` did. */
export interface AnswerOutcome {
  /** Keys sent upstream; the others stay pending (a round of questions waits for all its keys). */
  sent: string[];
  /** The call's next state when answering replaced the upstream handle (a multi-round-trip call). */
  next?: SubmitOutcome;
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
  /**
   * Sends answers to the task's outstanding questions (contracts.md, "Answering questions").
   * Absent, or resolving with nothing sent, where the contract cannot take answers.
   */
  answer?(ctx: DriverContext, answers: PendingAnswers): Promise<AnswerOutcome>;
}
