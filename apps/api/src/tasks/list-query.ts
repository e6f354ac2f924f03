import { THREAD_ID_PATTERN, TaskStatus } from '@app/common';
import { StatusFilter, TaskPageQuery } from '@app/persistence';
import { ProblemFieldError } from '../problem/problem.exception';
import { decodeCursor } from './list-cursor';
import { MalformedRequest } from '../refusals/refusal';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;
const TOOLSET_MAX_CHARS = 128;

export const STATUS_FILTERS: readonly string[] = [
  'active',
  'terminal',
  ...Object.values(TaskStatus),
];

/** RFC 3339 date-time with an explicit offset (`Z` or `±hh:mm`), fractions to microseconds. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** The raw query string of a list request, as Express parsed it (values may be arrays). */
export type RawListQuery = Record<string, unknown>;

/**
 * Validates the list filters (`status`, `toolset`, `created_after`, `created_before`, and across
 * threads `thread_id`), `limit` and `cursor` into a page query; every bad parameter is listed in
 * one 400. Parameters a list does not take never get here (QueryParamsGuard refuses them).
 */
export function parseListQuery(
  raw: RawListQuery,
  userId: string,
  threadId?: string,
): TaskPageQuery {
  const errors: ProblemFieldError[] = [];
  const query: TaskPageQuery = { userId, threadId, limit: DEFAULT_LIMIT };
  const status = raw.status;
  if (status !== undefined) {
    if (typeof status === 'string' && STATUS_FILTERS.includes(status))
      query.status = status as StatusFilter;
    else errors.push({ path: 'status', message: `must be one of ${STATUS_FILTERS.join(', ')}` });
  }
  const toolset = raw.toolset;
  if (toolset !== undefined) {
    if (typeof toolset === 'string' && toolset.length > 0 && toolset.length <= TOOLSET_MAX_CHARS)
      query.toolset = toolset;
    else errors.push({ path: 'toolset', message: `must be 1 to ${TOOLSET_MAX_CHARS} characters` });
  }
  const thread = raw.thread_id;
  if (thread !== undefined && threadId === undefined) {
    if (typeof thread === 'string' && THREAD_ID_PATTERN.test(thread)) query.threadId = thread;
    else errors.push({ path: 'thread_id', message: 'must match ^[A-Za-z0-9._:-]{1,128}$' });
  }
  for (const [name, field] of [
    ['created_after', 'createdAfter'],
    ['created_before', 'createdBefore'],
  ] as const) {
    const value = raw[name];
    if (value === undefined) continue;
    if (typeof value === 'string' && DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)))
      query[field] = value;
    else errors.push({ path: name, message: 'must be an RFC 3339 date-time with an offset' });
  }
  const limit = raw.limit;
  if (limit !== undefined) {
    const n = typeof limit === 'string' && /^\d{1,3}$/.test(limit) ? Number(limit) : NaN;
    if (n >= 1 && n <= MAX_LIMIT) query.limit = n;
    else errors.push({ path: 'limit', message: `must be an integer from 1 to ${MAX_LIMIT}` });
  }
  const cursor = raw.cursor;
  if (cursor !== undefined) {
    const position = typeof cursor === 'string' ? decodeCursor(cursor) : null;
    if (position) query.after = position;
    else errors.push({ path: 'cursor', message: 'is not a cursor this API issued' });
  }
  if (errors.length > 0) throw new MalformedRequest('Invalid query parameters.', errors);
  return query;
}
