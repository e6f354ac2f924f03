import { PROBLEM_KINDS } from './problem-kinds';
import { ProblemException, ProblemFieldError } from './problem.exception';

/**
 * The API's refusals, one class per cause, each of one kind of problem-kinds.ts. Services throw
 * them and callers branch on the class (the MCP front door maps the same classes to JSON-RPC
 * errors); the problem filter turns each into `application/problem+json` in one place
 * (problem.filter.ts, `toProblem`).
 */

/** 400: a malformed parameter, header or body (each in `errors`). */
export class MalformedRequest extends ProblemException {
  constructor(detail: string, errors?: ProblemFieldError[]) {
    super(PROBLEM_KINDS.badRequest, detail, errors);
  }
}

/** 400: query parameters the route does not take, each named in `errors`. */
export class UnknownQueryParameter extends ProblemException {
  constructor(readonly names: string[]) {
    super(
      PROBLEM_KINDS.unknownParameter,
      `Unknown query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}.`,
      names.map((name) => ({ path: name, message: 'is not a parameter of this route' })),
    );
  }
}

/** 401: the one answer to every failed authentication; never says which check failed. */
export class Unauthenticated extends ProblemException {
  constructor() {
    super(PROBLEM_KINDS.unauthorized, 'A valid bearer token is required.', undefined, {
      'WWW-Authenticate': 'Bearer',
    });
  }
}

/** 403: an admin route for a principal that is not an admin. */
export class Forbidden extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.forbidden, detail);
  }
}

/** 404: no such resource for this caller (another user's is the same 404). */
export class NotFound extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.notFound, detail);
  }
}

/** 409: an operator command refused for the state of its task or delivery. */
export class OperatorConflict extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.conflict, detail);
  }
}

/** 409: a cancel of a task that ended otherwise. */
export class TaskEnded extends ProblemException {
  constructor(status: string) {
    super(PROBLEM_KINDS.taskEnded, `The task is already ${status}.`);
  }
}

/** 409: answers for a task that cannot take them now (or ever, through the gateway). */
export class NotAnswerable extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.notAnswerable, detail);
  }
}

/** 409: a different answer for a question already answered. */
export class AnswerConflict extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.answerConflict, detail);
  }
}

/** 409: the task changed under a write that re-read it once already. */
export class TaskChanged extends ProblemException {
  constructor() {
    super(PROBLEM_KINDS.taskChanged, 'The task changed; read it and try again.');
  }
}

/** 409: a retry of a task that is not failed. */
export class NotRetryable extends ProblemException {
  constructor(status: string) {
    super(PROBLEM_KINDS.notRetryable, `Only a failed task can be retried; this one is ${status}.`);
  }
}

/** 413: a body over the limit. */
export class PayloadTooLarge extends ProblemException {
  constructor(detail = 'The request body is too large.') {
    super(PROBLEM_KINDS.payloadTooLarge, detail);
  }
}

/** 415: a body that is not JSON. */
export class UnsupportedMediaType extends ProblemException {
  constructor(detail = 'The request body must be application/json.') {
    super(PROBLEM_KINDS.unsupportedMediaType, detail);
  }
}

/** 422: a body that does not fit (each failing JSON Pointer in `errors`). */
export class ValidationFailed extends ProblemException {
  constructor(detail: string, errors?: ProblemFieldError[]) {
    super(PROBLEM_KINDS.validation, detail, errors);
  }
}

/** 422: a submit to a toolset the catalog does not have, or that no poller configures now. */
export class UnknownToolset extends ProblemException {
  constructor(message: string) {
    super(PROBLEM_KINDS.unknownToolset, 'Unknown toolset.', [{ path: '/toolset', message }]);
  }
}

/** 422: an Idempotency-Key already used for another request, or in a deleted thread. */
export class IdempotencyConflict extends ProblemException {
  constructor(detail: string, message: string) {
    super(PROBLEM_KINDS.idempotencyConflict, detail, [{ path: 'Idempotency-Key', message }]);
  }
}

/** 422: the user already has as many of these resources as allowed. */
export class LimitReached extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.limitReached, detail);
  }
}

/** 429: too many of something at once on this replica (event streams); Retry-After says when. */
export class RateLimited extends ProblemException {
  constructor(detail: string, retryAfterSeconds: number) {
    super(PROBLEM_KINDS.rateLimited, detail, undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/**
 * 429: a spent submit quota. The delay goes in `Retry-After` and in the body, with the quota's
 * name, so a client can back off per quota without parsing `detail`.
 */
export class QuotaExceeded extends ProblemException {
  constructor(
    readonly quota: string,
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(PROBLEM_KINDS.quotaExceeded, detail, undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
    Object.assign(this.problem, { quota, retry_after_seconds: retryAfterSeconds });
  }
}

/** 503 on readiness: the replica is draining, or its database does not answer. */
export class NotReady extends ProblemException {
  constructor(detail: string) {
    super(PROBLEM_KINDS.notReady, detail);
  }
}
