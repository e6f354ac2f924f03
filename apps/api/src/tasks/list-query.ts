import { TaskStatus } from '@app/common';
import { StatusFilter, TaskPageQuery } from '@app/persistence';
import { ProblemException, ProblemFieldError } from '../problem/problem.exception';
import { decodeCursor } from './list-cursor';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

const STATUS_FILTERS: readonly string[] = ['active', 'terminal', ...Object.values(TaskStatus)];

/** The raw query string of a list request, as Express parsed it (values may be arrays). */
export type RawListQuery = Record<string, unknown>;

/**
 * Validates `status`, `limit` and `cursor` into a page query; every bad parameter is listed in
 * one 400. Unknown parameters are ignored, as HTTP caches and proxies may add some.
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
  if (errors.length > 0) throw new ProblemException(400, 'Invalid query parameters.', errors);
  return query;
}
