/**
 * The API's refusals, one class per cause (docs/refusals.md). Services and guards throw them and
 * callers branch on the class or on `kind`, never on a status code or on `detail`. They know
 * nothing of HTTP or JSON-RPC: each edge maps every kind once, `/v1` to `application/problem+json`
 * (problem/refusal-problems.ts) and `/mcp` to a JSON-RPC error (front-door/refusal-errors.ts).
 * Both tables are typed over {@link RefusalKind}, so a new kind does not compile until both edges
 * say how they answer it.
 */

/** One failing place of a refusal and what is wrong there. */
export interface FieldError {
  /**
   * Where: a JSON Pointer into the submitted body (`/arguments/count`), a query parameter name,
   * or {@link IDEMPOTENCY_KEY_FIELD}; each edge spells it as its callers wrote it.
   */
  path: string;
  message: string;
}

/**
 * The field that names the request's idempotency key: the `Idempotency-Key` header on `/v1`,
 * `_meta["mcp-task-gateway/idempotencyKey"]` on `/mcp`.
 */
export const IDEMPOTENCY_KEY_FIELD = 'Idempotency-Key';

/** What every refusal carries: its kind, what happened (prose), and each failing field. */
export abstract class Refusal extends Error {
  /** Narrowed to one literal by each class; {@link RefusalKind} is their union. */
  abstract readonly kind: string;

  constructor(
    readonly detail: string,
    readonly errors: readonly FieldError[] = [],
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

/** A parameter, header or body that is malformed (each failing place in `errors`). */
export class MalformedRequest extends Refusal {
  readonly kind = 'malformed';
}

/** Query parameters the route does not take, each named in `errors`. */
export class UnknownQueryParameter extends Refusal {
  readonly kind = 'unknownParameter';

  constructor(readonly names: string[]) {
    super(
      `Unknown query parameter${names.length > 1 ? 's' : ''}: ${names.join(', ')}.`,
      names.map((name) => ({ path: name, message: 'is not a parameter of this route' })),
    );
  }
}

/**
 * Every failed authentication, one answer: it never says which check failed. `challenge` is what
 * the caller is told to present (`Bearer`, or naming the protected-resource metadata on `/mcp`).
 */
export class Unauthenticated extends Refusal {
  readonly kind = 'unauthenticated';

  constructor(readonly challenge = 'Bearer') {
    super('A valid bearer token is required.');
  }
}

/** A caller who is known but may not do this (an admin route, a foreign Origin, a bad CSRF token). */
export class Forbidden extends Refusal {
  readonly kind = 'forbidden';
}

/** No such resource for this caller: another user's, or one in a deleted thread, looks the same. */
export class NotFound extends Refusal {
  readonly kind = 'notFound';
}

/** An operator command refused for the state of its task or delivery. */
export class OperatorConflict extends Refusal {
  readonly kind = 'operatorConflict';
}

/** A cancel of a task that ended otherwise; `status` is how it ended. */
export class TaskEnded extends Refusal {
  readonly kind = 'taskEnded';

  constructor(readonly status: string) {
    super(`The task is already ${status}.`);
  }
}

/** Answers for a task that cannot take them now (or ever, through the gateway). */
export class NotAnswerable extends Refusal {
  readonly kind = 'notAnswerable';
}

/** A different answer for a question already answered. */
export class AnswerConflict extends Refusal {
  readonly kind = 'answerConflict';
}

/** The task changed under a write that re-read it once already. */
export class TaskChanged extends Refusal {
  readonly kind = 'taskChanged';

  constructor() {
    super('The task changed; read it and try again.');
  }
}

/** A retry of a task that is not failed. */
export class NotRetryable extends Refusal {
  readonly kind = 'notRetryable';

  constructor(readonly status: string) {
    super(`Only a failed task can be retried; this one is ${status}.`);
  }
}

/** Something that existed and no longer does for this purpose (an expired or used answer link). */
export class Gone extends Refusal {
  readonly kind = 'gone';
}

/** A body, or one answer in it, over its size limit (each answer over it in `errors`). */
export class PayloadTooLarge extends Refusal {
  readonly kind = 'payloadTooLarge';
}

/** A body that is not JSON, or in an encoding or charset that cannot be read. */
export class UnsupportedMediaType extends Refusal {
  readonly kind = 'unsupportedMediaType';
}

/**
 * Input that does not fit: a field, arguments against the toolset's input schema, text Postgres
 * cannot store, JSON nested too deep. Each failing field is named in `errors`.
 */
export class InvalidArguments extends Refusal {
  readonly kind = 'invalidArguments';
}

/** A submit to a toolset the catalog does not have, or that no poller configures now. */
export class UnknownToolset extends Refusal {
  readonly kind = 'unknownToolset';

  constructor(message: string) {
    super('Unknown toolset.', [{ path: '/toolset', message }]);
  }
}

/** An idempotency key already used for another request, or in a thread deleted since. */
export class IdempotencyConflict extends Refusal {
  readonly kind = 'idempotencyConflict';

  constructor(detail: string, message: string) {
    super(detail, [{ path: IDEMPOTENCY_KEY_FIELD, message }]);
  }
}

/** The user already has as many of these resources as allowed (webhooks). */
export class LimitReached extends Refusal {
  readonly kind = 'limitReached';
}

/**
 * Too many of something at once on this replica for this user (event streams, held `/mcp`
 * requests), retry after `retryAfterSeconds`; `quota` names the bound where callers are told.
 */
export class RateLimited extends Refusal {
  readonly kind = 'rateLimited';

  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
    readonly quota?: string,
  ) {
    super(detail);
  }
}

/** A spent submit quota (`quota` names which), retry after `retryAfterSeconds`. */
export class QuotaExceeded extends Refusal {
  readonly kind = 'quotaExceeded';

  constructor(
    readonly quota: string,
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}

/** Readiness: the replica is draining, or its database does not answer or takes no writes. */
export class NotReady extends Refusal {
  readonly kind = 'notReady';
}

/** Every refusal class: the union each edge's table is typed over. */
export type AnyRefusal =
  | MalformedRequest
  | UnknownQueryParameter
  | Unauthenticated
  | Forbidden
  | NotFound
  | OperatorConflict
  | TaskEnded
  | NotAnswerable
  | AnswerConflict
  | TaskChanged
  | NotRetryable
  | Gone
  | PayloadTooLarge
  | UnsupportedMediaType
  | InvalidArguments
  | UnknownToolset
  | IdempotencyConflict
  | LimitReached
  | RateLimited
  | QuotaExceeded
  | NotReady;

/** The kinds of refusal, one per class. */
export type RefusalKind = AnyRefusal['kind'];

/** The refusal of a given kind, for tables keyed by kind. */
export type RefusalOf<K extends RefusalKind> = Extract<AnyRefusal, { kind: K }>;

/** Whether a thrown value is one of the API's refusals. */
export function isRefusal(error: unknown): error is AnyRefusal {
  return error instanceof Refusal;
}
