import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcWireError } from '@app/wire';
import type { InputRequest2026, TaskPlan } from './task-2026.types';
import type { ToolCall2026, ToolOutcome2026 } from './tool-2026.types';
import { isRecord } from '@app/common';

export const DEFAULT_TTL_MS = 3_600_000;
export const DEFAULT_POLL_INTERVAL_MS = 500;

export function textResult(text: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    ...(structured === undefined ? {} : { structuredContent: structured }),
  };
}

export function toolErrorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A form elicitation for one field, the shape every question of the demo takes. */
export function ask(
  message: string,
  field: string,
  schema: Record<string, unknown>,
): InputRequest2026 {
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message,
      requestedSchema: { type: 'object', properties: { [field]: schema }, required: [field] },
    },
  };
}

/** The accepted content of an elicitation answer, or undefined for decline, cancel or junk. */
export function acceptedContent(response: unknown): Record<string, unknown> | undefined {
  if (!isRecord(response) || response.action !== 'accept') return undefined;
  return isRecord(response.content) ? response.content : {};
}

/** Resolves after `ms`, or rejects once the client has gone away. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('client went away'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('client went away'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A task for a request that declared the extension; otherwise the same work run synchronously
 * (the 2026 rule: never a CreateTaskResult to a request that did not declare tasks). A plan with
 * questions runs synchronously only once `answers` holds every answer (the caller gathered them
 * by multi-round-trip first).
 */
export async function taskOrSync(
  plan: TaskPlan,
  call: ToolCall2026,
  answers: Record<string, unknown> = {},
): Promise<ToolOutcome2026> {
  if (call.declaresTasks) return { kind: 'task', plan };
  await delay(plan.workMs + (plan.questions ? plan.resumeMs : 0), call.signal);
  const ending = plan.finish(answers);
  if (ending.status === 'completed') return { kind: 'complete', result: ending.result };
  const { code, message, data } = ending.error;
  return { kind: 'error', error: new JsonRpcWireError(code, message, data) };
}

/**
 * A multi-round-trip round (SEP-2322): the answers when the retried call carries one for every
 * question, else an `input_required` result asking only the questions still unanswered.
 */
export function gatherAnswers(
  questions: Record<string, InputRequest2026>,
  call: ToolCall2026,
  requestState?: string,
): { answers: Record<string, unknown> } | { outcome: ToolOutcome2026 } {
  const missing = Object.keys(questions).filter((key) => !(key in call.inputResponses));
  if (missing.length === 0) {
    const answers = Object.fromEntries(
      Object.keys(questions).map((key) => [key, call.inputResponses[key]]),
    );
    return { answers };
  }
  const inputRequests = Object.fromEntries(missing.map((key) => [key, questions[key]]));
  return {
    outcome: {
      kind: 'input_required',
      inputRequests,
      ...(requestState === undefined ? {} : { requestState }),
    },
  };
}
