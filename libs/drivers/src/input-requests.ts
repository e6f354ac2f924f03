import { isRecord } from '@app/common';
import { createHash } from 'node:crypto';
import { boundJsonField } from './bound-result';
import { protocolError } from './driver.errors';

/** One question, in the shape of an MCP input request: `elicitation/create`, `sampling/…`. */
export interface InputRequest {
  method: string;
  params: Record<string, unknown>;
}

/**
 * What every contract stores as a task's `input_required` (contracts.md, "Questions"):
 * `{requests: {<key>: {method, params}}}`. A key is unique for the task's life.
 */
export interface InputRequired {
  requests: Record<string, InputRequest>;
}

const KEY_MAX_CHARS = 255;

/**
 * Validates an upstream's request map (SEP-2663 `inputRequests`, or an `ordinary` status that
 * already uses the shape) and applies the 64 KiB bound of `input_required`.
 */
export function inputRequired(requests: unknown, what: string): InputRequired {
  if (!isRecord(requests) || Object.keys(requests).length === 0) {
    throw protocolError(`${what} must be a non-empty object of {method, params} by key`);
  }
  for (const [key, request] of Object.entries(requests)) {
    if (key.length === 0 || key.length > KEY_MAX_CHARS) {
      throw protocolError(`${what}: a key must have 1 to ${KEY_MAX_CHARS} characters`);
    }
    if (!isRecord(request) || typeof request.method !== 'string' || request.method === '') {
      throw protocolError(`${what}["${key}"] must be {method, params} with a method name`);
    }
    if (request.params !== undefined && !isRecord(request.params)) {
      throw protocolError(`${what}["${key}"].params must be an object`);
    }
  }
  const normalized: Record<string, InputRequest> = {};
  for (const [key, request] of Object.entries(requests as Record<string, InputRequest>)) {
    normalized[key] = { method: request.method, params: request.params ?? {} };
  }
  return boundJsonField({ requests: normalized }, what) as InputRequired;
}

/**
 * A free-form question (an `ordinary` status's `input_required` object, a SEP-1686 task's
 * `statusMessage`) as one `elicitation/create` request. The key is derived from the question, so
 * the same open question keeps its key across polls and a different one gets a new key.
 * A `message` (or `question`) string becomes the elicitation's message; the whole object is kept
 * under `params.question` so nothing the upstream said is lost.
 */
export function questionAsRequests(question: unknown, what: string): InputRequired {
  if (isRecord(question) && question.requests !== undefined) {
    return inputRequired(question.requests, `${what}.requests`);
  }
  const text = isRecord(question)
    ? firstString(question.message, question.question)
    : typeof question === 'string'
      ? question
      : undefined;
  const params: Record<string, unknown> = { mode: 'form', message: text ?? '' };
  if (isRecord(question)) {
    params.question = question;
    if (isRecord(question.requestedSchema)) params.requestedSchema = question.requestedSchema;
  }
  const digest = createHash('sha256').update(JSON.stringify(question)).digest('hex');
  const key = `q-${digest.slice(0, 16)}`;
  return boundJsonField(
    { requests: { [key]: { method: 'elicitation/create', params } } },
    what,
  ) as InputRequired;
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((value): value is string => typeof value === 'string');
}
