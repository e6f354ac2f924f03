import type { IncomingHttpHeaders } from 'node:http';
import { THREAD_ID_PATTERN } from '@app/common';
import { ErrorCode2026, JsonRpcWireError, invalidParams, isRecord } from '@app/wire';
import { Principal } from '../auth/token-verifier.service';
import { ProblemException } from '../problem/problem.exception';
import { McpResponseChannel } from './mcp-response.channel';

/** The `_meta` key (in a `tools/call`) that names the thread of the task it creates. */
export const THREAD_META = 'mcp-task-gateway/thread';

/**
 * The `_meta` key (in a `tools/call`) whose value makes the call idempotent: a retry with the
 * same key returns the same task, as `Idempotency-Key` does on `/v1` (docs/mcp.md).
 */
export const IDEMPOTENCY_META = 'mcp-task-gateway/idempotencyKey';

/** One JSON-RPC request as both handlers see it, after transport and authentication checks. */
export interface McpCall {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  principal: Principal;
  headers: IncomingHttpHeaders;
  /** The thread named by `?thread=` on the endpoint URL, if any. */
  urlThread?: string;
  /** Fires when the client goes away or cancels this request. */
  abort: AbortSignal;
  /** The call's answer, through which messages can be sent to the client first (as SSE). */
  channel?: McpResponseChannel;
  /**
   * Whether a task's questions go to the client as requests on `channel` (2025-11-25; the
   * 2026-07-28 side sends no unsolicited requests).
   */
  relaysQuestions?: boolean;
}

/**
 * The thread a task created by this call lands in: `_meta["mcp-task-gateway/thread"]`, else
 * `?thread=` on the URL, else the configured default.
 */
export function threadOf(call: McpCall, fallback: string): string {
  const meta = call.params._meta;
  const named = isRecord(meta) ? meta[THREAD_META] : undefined;
  const thread = named ?? call.urlThread ?? fallback;
  if (typeof thread !== 'string' || !THREAD_ID_PATTERN.test(thread)) {
    throw invalidParams(
      `the thread (_meta["${THREAD_META}"] or ?thread=) must match ${THREAD_ID_PATTERN.source}`,
    );
  }
  return thread;
}

/** The call's idempotency key (`_meta["mcp-task-gateway/idempotencyKey"]`), if it names one. */
export function idempotencyKeyOf(call: McpCall): string | undefined {
  const meta = call.params._meta;
  const key = isRecord(meta) ? meta[IDEMPOTENCY_META] : undefined;
  if (key === undefined) return undefined;
  if (typeof key !== 'string') throw invalidParams(`_meta["${IDEMPOTENCY_META}"] must be a string`);
  return key;
}

/** The tool call's arguments: an object (absent means none). */
export function argumentsOf(params: Record<string, unknown>): Record<string, unknown> {
  const args = params.arguments ?? {};
  if (!isRecord(args)) throw invalidParams('params.arguments must be an object');
  return args;
}

/**
 * A spent submit quota (HTTP 429) on the front door: a server-defined code in the JSON-RPC
 * range, chosen to read as 429, with the quota and the delay in `data` (docs/mcp.md, "Quotas").
 */
export const QUOTA_EXCEEDED_CODE = -32029;

/**
 * A refused submit as a JSON-RPC error: a validation problem (422) is -32602 naming each
 * failing path; a spent quota is QUOTA_EXCEEDED_CODE with the quota and the delay; anything
 * else keeps its detail.
 */
export function submitError(error: unknown): JsonRpcWireError {
  if (!(error instanceof ProblemException)) throw error;
  const problem = error.problem;
  const idempotency = problem.errors?.find((e) => e.path === 'Idempotency-Key');
  if (idempotency) {
    // The same rules as the header on /v1, named as this call spells the key.
    return invalidParams(`_meta["${IDEMPOTENCY_META}"] ${idempotency.message}`);
  }
  if (problem.status === 422) {
    const paths = (problem.errors ?? []).map((e) => `${e.path || '/'} ${e.message}`);
    return new JsonRpcWireError(
      ErrorCode2026.InvalidParams,
      [problem.detail, ...paths].join('; '),
      problem.errors ? { errors: problem.errors } : undefined,
    );
  }
  if (problem.status === 429) {
    const seconds = problem.retry_after_seconds ?? Number(error.headers['Retry-After'] ?? 1);
    return new JsonRpcWireError(QUOTA_EXCEEDED_CODE, problem.detail, {
      quota: problem.quota,
      retryAfterSeconds: seconds,
    });
  }
  return new JsonRpcWireError(-32000, problem.detail);
}
