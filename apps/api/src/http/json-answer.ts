import type { ServerResponse } from 'node:http';
import etag from 'etag';

/**
 * Sends `text` as a JSON answer with the headers Express's `res.json`/`res.send` give a POST's
 * answer, in the same order after `headers`: the content type with its charset, the length and
 * a weak ETag (Express's default, from the same `etag` package). For a handler that answers
 * outside Express (the submit fast path), so its answers cannot be told from the Nest route's.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  headers: Iterable<readonly [string, string]>,
  contentType: 'application/json' | 'application/problem+json',
  text: string,
): void {
  res.statusCode = status;
  for (const [name, value] of headers) res.setHeader(name, value);
  const body = Buffer.from(text, 'utf8');
  res.setHeader('Content-Type', `${contentType}; charset=utf-8`);
  res.setHeader('Content-Length', String(body.length));
  res.setHeader('ETag', etag(body, { weak: true }));
  res.end(body);
}
