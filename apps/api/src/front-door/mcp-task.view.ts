import { ERROR_MESSAGE_SHOWN_CHARS, TaskStatus, cutText, isRecord } from '@app/common';
import { TaskRow } from '@app/persistence';
import { consumerError } from '@app/views';

import { inputRequiredView } from '@app/views';

/** The MCP statuses of both task designs (2025-11-25 and 2026-07-28 share the names). */
export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** How long a task stays readable, and how often a client should poll it. */
export interface TaskTiming {
  ttlMs: number;
  pollIntervalMs: number;
}

/** A `CallToolResult`, as far as the front door builds one. */
export interface ToolResult {
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

/** The JSON-RPC code of a task that failed in the gateway (implementation-defined band). */
export const TASK_FAILED_CODE = -32001;

/** Keys of a stored result's `_meta` that belonged to the upstream's own task design. */
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** A queued task is running as far as MCP is concerned: the gateway holds it durably. */
export function mcpStatus(row: TaskRow): McpTaskStatus {
  switch (row.status) {
    case TaskStatus.Queued:
    case TaskStatus.Working:
      return 'working';
    case TaskStatus.InputRequired:
      return 'input_required';
    default:
      return row.status;
  }
}

/** What a person or model reads about the task now (never upstream internals). */
export function statusMessage(row: TaskRow): string | undefined {
  // The consumer's sentence (libs/views), never the stored operator text.
  const error = consumerError(row);
  if (error) return cutText(`${error.code}: ${error.message}`, ERROR_MESSAGE_SHOWN_CHARS);
  if (row.status === TaskStatus.Queued) return 'Accepted; waiting for a gateway worker.';
  if (row.status === TaskStatus.Cancelled) return 'The task was cancelled.';
  const progress = row.progress as { message?: unknown } | null;
  if (progress && typeof progress.message === 'string') return progress.message;
  return undefined;
}

/** The task as the 2025-11-25 design shows it (`Task`). */
export function legacyTask(row: TaskRow, timing: TaskTiming): Record<string, unknown> {
  const message = statusMessage(row);
  return {
    taskId: row.id,
    status: mcpStatus(row),
    ...(message === undefined ? {} : { statusMessage: message }),
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: row.updatedAt.toISOString(),
    ttl: timing.ttlMs,
    pollInterval: timing.pollIntervalMs,
  };
}

/**
 * The task's outcome as the `CallToolResult` the original call would have returned: the
 * upstream's own result when it was one, else the stored JSON as text and structured content;
 * a failure or a cancel as an `isError` result whose text says why.
 */
export function toolResult(row: TaskRow): ToolResult {
  const stored = row.result;
  if (row.status === TaskStatus.Completed || isCallToolResult(stored)) {
    if (isCallToolResult(stored)) return withoutRelatedTask(stored);
    if (stored === null || stored === undefined) return fromMissingResult(row);
    return {
      content: [{ type: 'text', text: JSON.stringify(stored) }],
      ...(isRecord(stored) ? { structuredContent: stored } : {}),
    };
  }
  return { content: [{ type: 'text', text: statusMessage(row) ?? row.status }], isError: true };
}

/** The 2026 reading of a gateway failure: an `isError` tool result ends `completed`. */
export function endsAsToolError(row: TaskRow): boolean {
  return row.status === TaskStatus.Failed && isCallToolResult(row.result);
}

/**
 * The task as the 2026-07-28 extension shows it (`DetailedTask`): the status-specific field
 * inlined. An `isError` tool result ends `completed`; only the gateway's own failures (the
 * upstream refused, lost or broke the task) are `failed`, with a JSON-RPC error.
 */
export function detailedTask(row: TaskRow, timing: TaskTiming): Record<string, unknown> {
  const toolError = endsAsToolError(row);
  const status = toolError ? 'completed' : mcpStatus(row);
  const message = statusMessage(row);
  const task: Record<string, unknown> = {
    taskId: row.id,
    status,
    ...(message === undefined ? {} : { statusMessage: message }),
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: row.updatedAt.toISOString(),
    ttlMs: timing.ttlMs,
    pollIntervalMs: timing.pollIntervalMs,
  };
  // The inlined result is what the call would have answered, and a 2026-07-28 CallToolResult
  // carries its resultType (the official task client refuses one without it).
  if (status === 'completed') task.result = { ...toolResult(row), resultType: 'complete' };
  if (status === 'failed') {
    task.error = {
      code: TASK_FAILED_CODE,
      message: message ?? 'The task failed.',
      data: { reason: row.errorCode },
    };
  }
  if (status === 'input_required') task.inputRequests = inputRequests(row);
  return task;
}

/**
 * The outstanding questions as `inputRequests`: the task's open requests (keys answered through
 * any face are gone), in the one shape the gateway stores them, `{method, params}` by key.
 */
export function inputRequests(row: TaskRow): Record<string, unknown> {
  return inputRequiredView(row)?.requests ?? {};
}

function isCallToolResult(value: unknown): value is ToolResult {
  return isRecord(value) && Array.isArray(value.content);
}

function withoutRelatedTask(result: ToolResult): ToolResult {
  if (!isRecord(result._meta) || !(RELATED_TASK_META in result._meta)) return result;
  const { [RELATED_TASK_META]: _dropped, ...meta } = result._meta;
  return { ...result, _meta: meta };
}

/** A completed task whose result was too large to store: its preview and artifact instead. */
function fromMissingResult(row: TaskRow): ToolResult {
  const content: Record<string, unknown>[] = [];
  if (row.resultPreview !== null) {
    content.push({ type: 'text', text: row.resultPreview });
    if (row.resultTruncated) {
      content.push({ type: 'text', text: '(result truncated: it exceeded the stored size)' });
    }
  }
  const artifact = row.resultArtifact as { uri?: unknown; mime_type?: unknown } | null;
  if (artifact && typeof artifact.uri === 'string') {
    content.push({
      type: 'resource_link',
      uri: artifact.uri,
      name: 'result',
      ...(typeof artifact.mime_type === 'string' ? { mimeType: artifact.mime_type } : {}),
    });
  }
  if (content.length === 0) content.push({ type: 'text', text: 'The task completed.' });
  return { content };
}
