import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ProblemDto } from './problem.dto';
import type { ProblemKind } from './problem-kinds';

/** What each error status means, as the OpenAPI document says it. */
const MEANINGS: Readonly<Record<number, string>> = {
  400: '`bad-request`: malformed parameters (thread or task ID, status, limit, cursor, Idempotency-Key) or a body that is not valid JSON; `unknown-parameter`: a query parameter the route does not take',
  401: 'Missing or invalid bearer token (JWT or API key); the detail never says which check failed',
  404: 'No such resource, or it belongs to another user or thread, or its thread was deleted',
  413: 'Request body over 1 MiB, or (answers) one answer over MAX_INPUT_RESPONSE_BYTES of JSON',
  415: 'Request body is not application/json',
  422: 'Body invalid (each path listed)',
};

/** `Retry-After` as the OpenAPI document declares it (429s, and 503s of the database). */
export const RETRY_AFTER_HEADER = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer', minimum: 1 },
};

/** The headers an error status always carries (the problem filter sets them). */
export const PROBLEM_HEADERS: Readonly<
  Record<number, Record<string, { description: string; schema: object }>>
> = {
  401: {
    'WWW-Authenticate': {
      description: 'The challenge: `Bearer`',
      schema: { type: 'string', example: 'Bearer' },
    },
  },
  405: {
    Allow: {
      description: "The path's methods",
      schema: { type: 'string', example: 'GET, HEAD, POST' },
    },
  },
  429: { 'Retry-After': RETRY_AFTER_HEADER },
};

/** One documented error answer: a status (its usual meaning), a kind, or a status and its meaning here. */
export type ProblemEntry = number | ProblemKind | readonly [number, string];

/**
 * Documents the given error answers, each with the problem+json body. A status alone takes its
 * usual meaning; a `[status, meaning]` pair replaces it where a route's reasons differ (a
 * webhook's 422 is its URL, not a toolset); kinds of one status are documented together, each
 * by its `type` slug and meaning, so a client generated from the document sees every cause.
 */
export function ApiProblems(...entries: ProblemEntry[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, string[]>();
  for (const entry of entries) {
    const [status, meaning] =
      typeof entry === 'number'
        ? [entry, MEANINGS[entry] ?? 'Error']
        : isKind(entry)
          ? [entry.status, `\`${entry.slug}\`: ${entry.means}`]
          : entry;
    byStatus.set(status, [...(byStatus.get(status) ?? []), meaning]);
  }
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...[...byStatus].map(([status, meanings]) =>
      ApiResponse({
        status,
        description: meanings.join('; '),
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDto) } } },
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
      }),
    ),
  );
}

function isKind(entry: ProblemEntry): entry is ProblemKind {
  return typeof entry === 'object' && 'slug' in entry;
}
