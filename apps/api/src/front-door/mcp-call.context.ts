import type { IncomingHttpHeaders } from 'node:http';
import { THREAD_ID_PATTERN, isRecord } from '@app/common';
import { invalidParams } from '@app/wire';
import { Principal } from '../auth/token-verifier.service';
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
