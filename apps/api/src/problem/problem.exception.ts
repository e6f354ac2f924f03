import { HttpException } from '@nestjs/common';
import { ProblemKind, kindOfStatus, problemType } from './problem-kinds';

export { PROBLEM_TYPE_BASE } from './problem-kinds';

/** One failing location of a validation problem: a JSON pointer-ish path and what is wrong. */
export interface ProblemFieldError {
  path: string;
  message: string;
}

/** The RFC 9457 body every error answers with (`application/problem+json`). */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: ProblemFieldError[];
  /** 429 only: which quota refused the request (docs/api.md, "Quotas"). */
  quota?: string;
  /** 429 only: the same delay as the `Retry-After` header, in the body for clients that drop headers. */
  retry_after_seconds?: number;
}

/** Builds a problem body of `kind` (or of a bare status's kind, see {@link kindOfStatus}). */
export function problemBody(
  kind: ProblemKind | number,
  detail: string,
  errors?: ProblemFieldError[],
): ProblemBody {
  const known = typeof kind === 'number' ? kindOfStatus(kind) : kind;
  const body: ProblemBody = {
    type: problemType(known),
    title: known.title,
    status: known.status,
    detail,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
}

/**
 * The base of every refusal the API's own code throws (refusals.ts has one class per cause): it
 * carries the exact problem body, its kind, and any headers (Retry-After, Allow), so the filter
 * maps it without guessing from a message. A bare status takes that status's first kind.
 */
export class ProblemException extends HttpException {
  readonly kind: ProblemKind;

  constructor(
    kind: ProblemKind | number,
    detail: string,
    errors?: ProblemFieldError[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    const body = problemBody(kind, detail, errors);
    super(body, body.status);
    this.kind = typeof kind === 'number' ? kindOfStatus(kind) : kind;
  }

  get problem(): ProblemBody {
    return this.getResponse() as ProblemBody;
  }
}
