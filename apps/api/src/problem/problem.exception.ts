import type { FieldError } from '../refusals/refusal';
import { ProblemKind, kindOfStatus, problemType } from './problem-kinds';

export { PROBLEM_TYPE_BASE } from './problem-kinds';

/** One failing location of a problem, as a refusal names it (`errors[]`). */
export type ProblemFieldError = FieldError;

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

/** A problem answer: its body and the headers it carries (Retry-After, Allow, WWW-Authenticate). */
export interface ProblemAnswer {
  body: ProblemBody;
  headers: Readonly<Record<string, string>>;
}
