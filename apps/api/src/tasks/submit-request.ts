import { createHash } from 'node:crypto';
import { isRecord, METADATA_MAX_BYTES } from '@app/common';
import { MAX_JSON_DEPTH } from '../http/json-text.guard';
import { ProblemFieldError } from '../problem/problem.exception';
import { InvalidArguments } from '../refusals/refusal';
import { pointerToken } from '../http/json-pointer';

/** A validated submit body. */
export interface SubmitRequest {
  toolset: string;
  arguments: Record<string, unknown>;
  metadata: Record<string, unknown> | null;
}

export { MAX_JSON_DEPTH };
const TOOLSET_NAME_MAX = 128;
const FIELDS = new Set(['toolset', 'arguments', 'metadata']);

/**
 * Checks the shape of a submit body (arguments against the schema come later, once the toolset
 * is known). Every problem is listed with its JSON Pointer, in one 422. Unknown fields are
 * refused, so a misspelt `metdata` is not silently dropped.
 */
export function parseSubmitBody(body: unknown): SubmitRequest {
  if (!isRecord(body)) {
    throw new InvalidArguments('The request body must be a JSON object.', [
      { path: '', message: 'must be an object with toolset and arguments' },
    ]);
  }
  // Checked alone and first: the size check below walks the body recursively.
  if (jsonDepth(body) > MAX_JSON_DEPTH) {
    throw new InvalidArguments('The request body is invalid.', [
      { path: '', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  }
  const errors: ProblemFieldError[] = [];
  for (const key of Object.keys(body)) {
    if (!FIELDS.has(key)) errors.push({ path: pointer(key), message: 'is not a known field' });
  }
  const { toolset, arguments: args, metadata } = body;
  if (typeof toolset !== 'string' || toolset.length === 0 || toolset.length > TOOLSET_NAME_MAX) {
    errors.push({
      path: '/toolset',
      message: `must be a string of 1 to ${TOOLSET_NAME_MAX} characters`,
    });
  }
  if (!isRecord(args)) errors.push({ path: '/arguments', message: 'must be an object' });
  if (metadata !== undefined && metadata !== null) {
    if (!isRecord(metadata)) errors.push({ path: '/metadata', message: 'must be an object' });
    else if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > METADATA_MAX_BYTES) {
      errors.push({
        path: '/metadata',
        message: `must not exceed ${METADATA_MAX_BYTES} bytes as JSON`,
      });
    }
  }
  if (errors.length > 0) throw new InvalidArguments('The request body is invalid.', errors);
  return {
    toolset: toolset as string,
    arguments: args as Record<string, unknown>,
    metadata: (metadata as Record<string, unknown> | null | undefined) ?? null,
  };
}

/**
 * The hash that decides whether a retried POST with the same Idempotency-Key is the same
 * request: the thread and the body, in canonical JSON (object keys sorted), so key order or
 * whitespace in a client's serialisation does not turn a retry into a conflict.
 */
export function requestHash(threadId: string, request: SubmitRequest): string {
  const canonical = canonicalJson([threadId, request.toolset, request.arguments, request.metadata]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** JSON with object keys sorted at every level. Input depth is bounded by {@link MAX_JSON_DEPTH}. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Nesting depth, iteratively: the point is to measure input too deep for recursion. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) max = depth;
    if (max > MAX_JSON_DEPTH) return max;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

function pointer(key: string): string {
  return `/${pointerToken(key)}`;
}
