import type { RequestHandler } from 'express';
import { InvalidArguments, Refusal } from '../refusals/refusal';
import { pointerToken } from './json-pointer';

/** Deeper JSON is refused: recursive code further on (hashing, schema validation, JSON.stringify,
 * Postgres' jsonb) would overflow its stack long before a depth check inside it could stop it. */
export const MAX_JSON_DEPTH = 64;

/** U+0000 and a UTF-16 surrogate without its pair: Postgres stores neither (text nor jsonb). */
// eslint-disable-next-line no-control-regex -- finding NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The 422 of a parsed JSON body that could not be stored or walked safely, or undefined: nested
 * deeper than {@link MAX_JSON_DEPTH}, or a string or key with a NUL or an unpaired surrogate.
 * One walk, iterative (an explicit stack), so the check itself cannot overflow; the problem
 * names the JSON Pointer of the first offending place. Shared by {@link jsonTextGuard} and the
 * submit fast path.
 */
export function bodyTextProblem(body: unknown): Refusal | undefined {
  if (typeof body !== 'object' || body === null) {
    return typeof body === 'string' && UNSTORABLE.test(body) ? unstorable('') : undefined;
  }
  const stack: [unknown, string, number][] = [[body, '', 1]];
  while (stack.length > 0) {
    const [node, path, depth] = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) {
      return new InvalidArguments('The request body is nested too deeply.', [
        { path, message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
    for (const [key, value] of Object.entries(node as object)) {
      const child = `${path}/${pointerToken(key)}`;
      if (UNSTORABLE.test(key) || (typeof value === 'string' && UNSTORABLE.test(value))) {
        return unstorable(child);
      }
      if (typeof value === 'object' && value !== null) stack.push([value, child, depth + 1]);
    }
  }
  return undefined;
}

/** Refuses, before any handler sees it, a parsed body {@link bodyTextProblem} objects to. */
export function jsonTextGuard(): RequestHandler {
  const jsonText: RequestHandler = (req, _res, next) => next(bodyTextProblem(req.body));
  return jsonText;
}

function unstorable(path: string): Refusal {
  // The pointer itself may hold the NUL; show it escaped so the answer stays printable.
  const shown = path.replace(
    // eslint-disable-next-line no-control-regex -- finding NUL is the point
    /[\u0000\ud800-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return new InvalidArguments('The request body contains text that cannot be stored.', [
    { path: shown, message: 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate' },
  ]);
}
