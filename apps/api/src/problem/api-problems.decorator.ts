import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ProblemDto } from './problem.dto';

/** What each error status means, as the OpenAPI document says it. */
const MEANINGS: Readonly<Record<number, string>> = {
  400: 'Malformed parameters (thread or task ID, status, limit, cursor, Idempotency-Key) or a body that is not valid JSON',
  401: 'Missing or invalid bearer token (JWT or API key); the detail never says which check failed',
  404: 'No such resource, or it belongs to another user or thread, or its thread was deleted',
  409: 'The task is already terminal',
  413: 'Request body over 1 MiB, or (answers) one answer over MAX_INPUT_RESPONSE_BYTES of JSON',
  415: 'Request body is not application/json',
  422: 'Body invalid: unknown toolset, arguments failing the input schema (each path listed), metadata over 4 KiB, or an Idempotency-Key reused with another body',
  429: 'A submit quota of the user is spent (quota names which); see Retry-After',
  503: 'Not ready (draining or database unreachable)',
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

/**
 * Documents the given error statuses, each with the problem+json body. A `[status, meaning]`
 * pair replaces the default meaning where a route's reasons differ (a webhook's 422 is its URL,
 * not a toolset).
 */
export function ApiProblems(
  ...statuses: Array<number | readonly [number, string]>
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...statuses.map((entry) => {
      const [status, meaning] = typeof entry === 'number' ? [entry, undefined] : entry;
      return ApiResponse({
        status,
        description: meaning ?? MEANINGS[status] ?? 'Error',
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDto) } } },
        ...(PROBLEM_HEADERS[status] ? { headers: PROBLEM_HEADERS[status] } : {}),
      });
    }),
  );
}
