import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { JsonRpcWireError } from '@app/wire';
import type { InputRequest2026, TaskPlan } from './task-2026.types';

/**
 * A tool's task mode. There is no wire field for it in 2026-07-28: it is the server's own
 * registration, visible to a client only through -32021 (a `required` tool called without the
 * tasks extension).
 */
export type TaskMode = 'forbidden' | 'optional' | 'required';

/** What a tool sees of the `tools/call` request besides its arguments. */
export interface ToolCall2026 {
  declaresTasks: boolean;
  /** Answers of a multi-round-trip retry (SEP-2322), keyed like the inputRequests asked. */
  inputResponses: Record<string, unknown>;
  requestState?: string;
  /** Aborted when the client goes away during a synchronous run. */
  signal: AbortSignal;
  /** The request's `_meta.progressToken`, when it asked for progress. */
  progressToken?: string | number;
  /** Sends a notification for this request (on the 2026 side: the answer becomes SSE). */
  notify(method: string, params: Record<string, unknown>): void | Promise<void>;
}

/** The answer a tool chooses; `task` is only ever returned to a request that declared tasks. */
export type ToolOutcome2026 =
  | { kind: 'complete'; result: CallToolResult }
  | {
      kind: 'input_required';
      inputRequests: Record<string, InputRequest2026>;
      requestState?: string;
    }
  | { kind: 'task'; plan: TaskPlan }
  | { kind: 'error'; error: JsonRpcWireError };

export interface Tool2026<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  mode: TaskMode;
  schema: S;
  call(args: z.infer<S>, call: ToolCall2026): Promise<ToolOutcome2026>;
}

/** Keeps each tool's argument type when tools of different shapes share one list. */
export function defineTool<S extends z.ZodObject>(tool: Tool2026<S>): Tool2026 {
  return tool;
}
