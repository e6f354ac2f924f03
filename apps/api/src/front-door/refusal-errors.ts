import { ErrorCode2026, JsonRpcWireError } from '@app/wire';
import {
  AnyRefusal,
  FieldError,
  IDEMPOTENCY_KEY_FIELD,
  RefusalKind,
  RefusalOf,
} from '../refusals/refusal';
import { IDEMPOTENCY_META } from './mcp-call.context';

/**
 * A spent quota, or too many open requests of one kind (HTTP 429 on `/v1`): a server-defined
 * code in the JSON-RPC range, chosen to read as 429, with the quota and the delay in `data`
 * (docs/mcp.md, "Quotas").
 */
export const QUOTA_EXCEEDED_CODE = -32029;

/** A refusal JSON-RPC has no code for (a conflict, a forbidden action): its detail as message. */
export const REFUSED_CODE = -32000;

/** The `error` member a refusal answers with on `/mcp`. */
export interface RefusalError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** How the front door spells the fields a refusal names in `/v1` terms. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  [IDEMPOTENCY_KEY_FIELD]: `_meta["${IDEMPOTENCY_META}"]`,
};

function spelled(error: FieldError): FieldError {
  return { path: FIELD_NAMES[error.path] ?? error.path, message: error.message };
}

/**
 * -32602 naming each failing field in the message and in `data.errors`. A field the front door
 * spells otherwise (the idempotency key, a `_meta` member here) is named alone: the detail names
 * the `/v1` header.
 */
function invalidParams(refusal: AnyRefusal): RefusalError {
  const errors = refusal.errors.map(spelled);
  const respelled = refusal.errors.some((error) => error.path in FIELD_NAMES);
  const places = errors.map((error) => `${error.path || '/'} ${error.message}`);
  return {
    code: ErrorCode2026.InvalidParams,
    message: respelled ? places.join('; ') : [refusal.detail, ...places].join('; '),
    ...(errors.length > 0 ? { data: { errors } } : {}),
  };
}

function refused(refusal: AnyRefusal): RefusalError {
  return { code: REFUSED_CODE, message: refusal.detail };
}

function tooMany(refusal: RefusalOf<'quotaExceeded' | 'rateLimited'>): RefusalError {
  return {
    code: QUOTA_EXCEEDED_CODE,
    message: refusal.detail,
    data: { quota: refusal.quota, retryAfterSeconds: refusal.retryAfterSeconds },
  };
}

/**
 * Every refusal kind as a JSON-RPC error: the one place `/mcp` turns a refusal into a code, a
 * message and data, in both protocol eras. The `/v1` side is problem/refusal-problems.ts;
 * docs/refusals.md lists both. Kinds marked "not on /mcp" are refused before any JSON-RPC runs
 * (as problem answers) or belong to routes `/mcp` does not reach; they still have an answer, so
 * one that starts reaching it answers sensibly.
 */
export const REFUSAL_ERRORS: {
  readonly [K in RefusalKind]: (refusal: RefusalOf<K>) => RefusalError;
} = {
  malformed: invalidParams,
  unknownParameter: invalidParams, // not on /mcp
  unauthenticated: refused, // not on /mcp: a 401 problem before the body is read
  forbidden: refused, // not on /mcp: a 403 problem (Origin)
  // Only tasks are looked up by ID on /mcp; the message is the tasks design's own.
  notFound: () => ({
    code: ErrorCode2026.InvalidParams,
    message: 'Failed to retrieve task: Task not found',
  }),
  operatorConflict: refused, // not on /mcp
  // As the 2025-11-25 tasks design words it (2026-07-28 acks a cancel of an ended task).
  taskEnded: (refusal) => ({
    code: ErrorCode2026.InvalidParams,
    message: `Cannot cancel task: it is already ${refusal.status}`,
  }),
  notAnswerable: refused,
  answerConflict: refused,
  taskChanged: refused,
  notRetryable: refused, // not on /mcp
  gone: refused, // not on /mcp
  payloadTooLarge: invalidParams,
  unsupportedMediaType: invalidParams, // not on /mcp: a 415 problem
  invalidArguments: invalidParams,
  unknownToolset: invalidParams,
  idempotencyConflict: invalidParams,
  limitReached: refused, // not on /mcp
  rateLimited: tooMany,
  quotaExceeded: tooMany,
  notReady: refused, // not on /mcp
};

/** A refusal as the JSON-RPC error `/mcp` answers (REFUSAL_ERRORS). */
export function refusalError(refusal: AnyRefusal): JsonRpcWireError {
  // The table is typed per kind; looked up by a refusal of the union, the entry takes it whole.
  const answer = (REFUSAL_ERRORS[refusal.kind] as (r: AnyRefusal) => RefusalError)(refusal);
  return new JsonRpcWireError(answer.code, answer.message, answer.data);
}
