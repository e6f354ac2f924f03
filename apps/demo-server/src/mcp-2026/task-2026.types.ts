import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** One question a task or a multi-round-trip call puts to the client (no JSON-RPC id). */
export interface InputRequest2026 {
  method: 'elicitation/create';
  params: {
    mode: 'form';
    message: string;
    requestedSchema: {
      type: 'object';
      properties: Record<string, Record<string, unknown>>;
      required?: string[];
    };
  };
}

export type TaskStatus2026 = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** How a task ends: a tool result (an `isError` one included) or a JSON-RPC error. */
export type TaskEnding =
  | { status: 'completed'; result: CallToolResult }
  | { status: 'failed'; error: { code: number; message: string; data?: unknown } };

/**
 * What a task does, fixed when it is created. Its state at any instant follows from this plan,
 * the creation time, the answers and the cancel time: no timers run.
 */
export interface TaskPlan {
  /** Working time before the questions are asked; without questions, before the end. */
  workMs: number;
  /** Asked all at once; each key is answered (or not) on its own. */
  questions?: Record<string, InputRequest2026>;
  /** Working time after the last answer. */
  resumeMs: number;
  /** The ending, from the answers received (empty without questions). */
  finish(answers: Record<string, unknown>): TaskEnding;
  ttlMs: number | null;
  pollIntervalMs: number;
  tag?: string;
  /** A task whose state comes from elsewhere (a 2025-side job); it then overrides the above. */
  external?: ExternalTimeline;
}

/** A timeline the task only mirrors: its phase at each read, and how to cancel it. */
export interface ExternalTimeline {
  /** `answered` holds the keys already answered, so an answered question stops being pending. */
  phase(answered: ReadonlySet<string>): TaskPhase2026;
  cancel(): void;
  /** When its phase next moves by itself, after `now` (undefined: only an outside act can). */
  nextChange(now: number): number | undefined;
}

export interface TaskRecord2026 {
  taskId: string;
  createdAt: number;
  plan: TaskPlan;
  answers: Map<string, { response: unknown; at: number }>;
  cancelledAt?: number;
}

export interface TaskPhase2026 {
  status: TaskStatus2026;
  /** When this phase began: lastUpdatedAt. */
  since: number;
  /** input_required only: the keys still waiting for an answer. */
  pending?: string[];
  ending?: TaskEnding;
}
