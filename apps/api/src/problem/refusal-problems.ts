import { AnyRefusal, RefusalKind, RefusalOf } from '../refusals/refusal';
import { PROBLEM_KINDS, ProblemKind } from './problem-kinds';
import { ProblemAnswer, problemBody } from './problem.exception';

/** How `/v1` answers one kind of refusal: its problem kind, and what else the answer carries. */
interface ProblemMapping<R extends AnyRefusal> {
  readonly problem: ProblemKind;
  /** Headers beside the body (Retry-After, WWW-Authenticate). */
  readonly headers?: (refusal: R) => Record<string, string>;
  /** Members added to the body (a quota's name and delay, for clients that drop headers). */
  readonly extra?: (refusal: R) => Record<string, unknown>;
}

/**
 * Every refusal kind as `application/problem+json`: the one place `/v1` (and the problem answers
 * `/mcp` gives before any JSON-RPC runs) turns a refusal into a status, a `type` and headers.
 * The JSON-RPC side is front-door/refusal-errors.ts; docs/refusals.md lists both.
 */
export const REFUSAL_PROBLEMS: { readonly [K in RefusalKind]: ProblemMapping<RefusalOf<K>> } = {
  malformed: { problem: PROBLEM_KINDS.badRequest },
  unknownParameter: { problem: PROBLEM_KINDS.unknownParameter },
  unauthenticated: {
    problem: PROBLEM_KINDS.unauthorized,
    headers: (r) => ({ 'WWW-Authenticate': r.challenge }),
  },
  forbidden: { problem: PROBLEM_KINDS.forbidden },
  notFound: { problem: PROBLEM_KINDS.notFound },
  operatorConflict: { problem: PROBLEM_KINDS.conflict },
  taskEnded: { problem: PROBLEM_KINDS.taskEnded },
  notAnswerable: { problem: PROBLEM_KINDS.notAnswerable },
  answerConflict: { problem: PROBLEM_KINDS.answerConflict },
  taskChanged: { problem: PROBLEM_KINDS.taskChanged },
  notRetryable: { problem: PROBLEM_KINDS.notRetryable },
  gone: { problem: PROBLEM_KINDS.answerLinkGone },
  payloadTooLarge: { problem: PROBLEM_KINDS.payloadTooLarge },
  unsupportedMediaType: { problem: PROBLEM_KINDS.unsupportedMediaType },
  invalidArguments: { problem: PROBLEM_KINDS.validation },
  unknownToolset: { problem: PROBLEM_KINDS.unknownToolset },
  idempotencyConflict: { problem: PROBLEM_KINDS.idempotencyConflict },
  limitReached: { problem: PROBLEM_KINDS.limitReached },
  rateLimited: {
    problem: PROBLEM_KINDS.rateLimited,
    headers: (r) => ({ 'Retry-After': String(r.retryAfterSeconds) }),
  },
  quotaExceeded: {
    problem: PROBLEM_KINDS.quotaExceeded,
    headers: (r) => ({ 'Retry-After': String(r.retryAfterSeconds) }),
    extra: (r) => ({ quota: r.quota, retry_after_seconds: r.retryAfterSeconds }),
  },
  notReady: { problem: PROBLEM_KINDS.notReady },
};

/** A refusal as its problem answer (REFUSAL_PROBLEMS). */
export function refusalProblem(refusal: AnyRefusal): ProblemAnswer {
  // The table is typed per kind; looked up by a refusal of the union, the entry takes it whole.
  const mapping = REFUSAL_PROBLEMS[refusal.kind] as ProblemMapping<AnyRefusal>;
  const body = { ...problemBody(mapping.problem, refusal.detail, [...refusal.errors]) };
  return {
    body: { ...body, ...mapping.extra?.(refusal) },
    headers: mapping.headers?.(refusal) ?? {},
  };
}
