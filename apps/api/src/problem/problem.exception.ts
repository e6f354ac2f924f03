import { HttpException } from '@nestjs/common';

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

/** Base of the `type` URIs; they name the problem kind, and the OpenAPI page documents each. */
export const PROBLEM_TYPE_BASE = 'https://mcp-task-gateway.dev/problems/';

/** Status → (type slug, title). One title per status keeps clients from parsing prose. */
export const PROBLEM_KINDS: Readonly<Record<number, { slug: string; title: string }>> = {
  400: { slug: 'bad-request', title: 'Malformed request' },
  401: { slug: 'unauthorized', title: 'Authentication required' },
  403: { slug: 'forbidden', title: 'Forbidden' },
  404: { slug: 'not-found', title: 'Not found' },
  405: { slug: 'method-not-allowed', title: 'Method not allowed' },
  409: { slug: 'conflict', title: 'Conflict' },
  410: { slug: 'gone', title: 'Gone' },
  413: { slug: 'payload-too-large', title: 'Request body too large' },
  415: { slug: 'unsupported-media-type', title: 'Unsupported media type' },
  422: { slug: 'validation', title: 'Validation failed' },
  429: { slug: 'rate-limited', title: 'Too many requests' },
  500: { slug: 'internal', title: 'Internal error' },
  503: { slug: 'unavailable', title: 'Service unavailable' },
};

/** Builds a problem body for `status`; unknown statuses get a generic kind. */
export function problemBody(
  status: number,
  detail: string,
  errors?: ProblemFieldError[],
): ProblemBody {
  const kind = PROBLEM_KINDS[status] ?? { slug: 'http-error', title: 'HTTP error' };
  const body: ProblemBody = {
    type: PROBLEM_TYPE_BASE + kind.slug,
    title: kind.title,
    status,
    detail,
  };
  if (errors && errors.length > 0) body.errors = errors;
  return body;
}

/**
 * The only exception the API's own code throws for a client error: it carries the exact problem
 * body and any headers (Retry-After, Allow), so the filter never has to guess from a message.
 */
export class ProblemException extends HttpException {
  constructor(
    status: number,
    detail: string,
    errors?: ProblemFieldError[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(problemBody(status, detail, errors), status);
  }

  /**
   * A 429 for a spent quota: the delay goes in `Retry-After` and in the body, with the quota's
   * name, so a client can back off per quota without parsing `detail`.
   */
  static quota(quota: string, detail: string, retryAfterSeconds: number): ProblemException {
    const exception = new ProblemException(429, detail, undefined, {
      'Retry-After': String(retryAfterSeconds),
    });
    Object.assign(exception.problem, { quota, retry_after_seconds: retryAfterSeconds });
    return exception;
  }

  get problem(): ProblemBody {
    return this.getResponse() as ProblemBody;
  }
}
