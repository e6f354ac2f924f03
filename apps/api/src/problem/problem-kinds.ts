/**
 * One kind of problem: the last segment of its `type` URI, its HTTP status, its fixed title, and
 * what it means (the OpenAPI document and docs/api.md, "Problem types", say the same).
 */
export interface ProblemKind {
  readonly slug: string;
  readonly status: number;
  readonly title: string;
  readonly means: string;
}

/** Base of the `type` URIs: `type` is this plus the kind's slug. */
export const PROBLEM_TYPE_BASE = 'https://mcp-task-gateway.dev/problems/';

/**
 * Every kind of problem the API answers, one per cause, so a client branches on `type` and never
 * on `detail` or on a status that several causes share (two 409s, two 422s, two 429s). The first
 * kind of each status is also the one a bare status maps to (a framework error, a router's miss).
 * A new cause gets a class in refusals/refusal.ts, and a kind here when `/v1` must tell it apart
 * (refusal-problems.ts maps each refusal to one); docs/api.md lists them all (a test checks).
 */
export const PROBLEM_KINDS = {
  badRequest: {
    slug: 'bad-request',
    status: 400,
    title: 'Malformed request',
    means:
      'A parameter or header is malformed (thread or task ID, status, limit, cursor, Idempotency-Key, Last-Event-ID), or the body is not valid JSON',
  },
  unknownParameter: {
    slug: 'unknown-parameter',
    status: 400,
    title: 'Unknown query parameter',
    means: 'The query string names a parameter the route does not take (each one in `errors`)',
  },
  unauthorized: {
    slug: 'unauthorized',
    status: 401,
    title: 'Authentication required',
    means: 'No bearer token, or one that does not verify; the detail never says which check failed',
  },
  forbidden: {
    slug: 'forbidden',
    status: 403,
    title: 'Forbidden',
    means: 'An admin route for a principal not in ADMIN_USERS',
  },
  notFound: {
    slug: 'not-found',
    status: 404,
    title: 'Not found',
    means:
      'No such route or resource, or it belongs to another user or thread, or its thread was deleted',
  },
  methodNotAllowed: {
    slug: 'method-not-allowed',
    status: 405,
    title: 'Method not allowed',
    means: 'The path does not route this method; `Allow` lists those it does',
  },
  conflict: {
    slug: 'conflict',
    status: 409,
    title: 'Conflict',
    means: 'An operator command refused for the state of its task or delivery',
  },
  taskEnded: {
    slug: 'task-ended',
    status: 409,
    title: 'Task already ended',
    means: 'A cancel of a task that ended otherwise (completed, failed, cancelled unasked)',
  },
  notAnswerable: {
    slug: 'not-answerable',
    status: 409,
    title: 'Task not waiting for answers',
    means:
      'Answers for a task that is not input_required, is being cancelled, or whose upstream cannot take answers through the gateway',
  },
  answerConflict: {
    slug: 'answer-conflict',
    status: 409,
    title: 'Question already answered otherwise',
    means: 'A different answer for a question already answered',
  },
  taskChanged: {
    slug: 'task-changed',
    status: 409,
    title: 'Task changed meanwhile',
    means: 'The task changed while the answers were stored; read it and try again',
  },
  notRetryable: {
    slug: 'not-retryable',
    status: 409,
    title: 'Task not failed',
    means: 'A retry of a task that is not failed',
  },
  answerLinkGone: {
    slug: 'answer-link-gone',
    status: 410,
    title: 'Answer link no longer valid',
    means: 'An answer link that expired, or whose questions are answered or no longer asked',
  },
  payloadTooLarge: {
    slug: 'payload-too-large',
    status: 413,
    title: 'Request body too large',
    means: 'The body is over 1 MiB',
  },
  unsupportedMediaType: {
    slug: 'unsupported-media-type',
    status: 415,
    title: 'Unsupported media type',
    means: 'The body is not application/json',
  },
  validation: {
    slug: 'validation',
    status: 422,
    title: 'Validation failed',
    means:
      'The body does not fit: a field, arguments against the input schema, metadata over 4 KiB, text Postgres cannot store, JSON nested too deep (each path in `errors`)',
  },
  unknownToolset: {
    slug: 'unknown-toolset',
    status: 422,
    title: 'Unknown toolset',
    means: 'The toolset is not in the catalog, or no running poller configures it any more',
  },
  idempotencyConflict: {
    slug: 'idempotency-conflict',
    status: 422,
    title: 'Idempotency-Key reused',
    means: 'The Idempotency-Key was used with another body or thread, or in a thread deleted since',
  },
  limitReached: {
    slug: 'limit-reached',
    status: 422,
    title: 'Limit reached',
    means: 'The user already has the most resources of this kind allowed (webhooks)',
  },
  rateLimited: {
    slug: 'rate-limited',
    status: 429,
    title: 'Too many requests',
    means: 'Too many open event streams for the user on this replica; see Retry-After',
  },
  quotaExceeded: {
    slug: 'quota-exceeded',
    status: 429,
    title: 'Quota exceeded',
    means: 'A submit quota of the user is spent (`quota` names which); see Retry-After',
  },
  internal: {
    slug: 'internal',
    status: 500,
    title: 'Internal error',
    means: 'An unexpected error; the detail says nothing more',
  },
  unavailable: {
    slug: 'unavailable',
    status: 503,
    title: 'Service unavailable',
    means:
      'The database could not serve the request now (busy, unreachable or out of space); see Retry-After',
  },
  notReady: {
    slug: 'not-ready',
    status: 503,
    title: 'Not ready',
    means: 'Readiness: the replica is draining, or its database does not answer or takes no writes',
  },
} as const satisfies Record<string, ProblemKind>;

/** The kind a bare status maps to: the first kind listed with that status. */
export function kindOfStatus(status: number): ProblemKind {
  return (
    Object.values(PROBLEM_KINDS).find((kind) => kind.status === status) ?? {
      slug: 'http-error',
      status,
      title: 'HTTP error',
      means: 'An HTTP error',
    }
  );
}

/** The `type` URI of a kind. */
export function problemType(kind: ProblemKind): string {
  return PROBLEM_TYPE_BASE + kind.slug;
}
