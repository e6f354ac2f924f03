import type { RequestHandler } from 'express';
import { ProblemException } from '../problem/problem.exception';

/** `Authorization: Bearer <token>`: the token's characters per RFC 6750 (b64token). */
export const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** Every route under this prefix needs a token; the public ones (health, OpenAPI) live outside. */
const PROTECTED_PREFIX = '/v1/';

/** The one 401 every authentication failure answers with, the guard's and this middleware's. */
export function unauthorized(): ProblemException {
  return new ProblemException(401, 'A valid bearer token is required.', undefined, {
    'WWW-Authenticate': 'Bearer',
  });
}

/**
 * Refuses a request under `/v1/` that carries no well-formed bearer token before anything reads
 * its body: an anonymous caller must not make the API parse up to 1 MiB of JSON, nor learn from
 * a 413 or a 415 what it would accept. Only the syntax is checked here (no I/O); the
 * {@link AuthGuard} verifies the token itself once the route is known.
 */
export function bearerFirstMiddleware(): RequestHandler {
  return (req, _res, next) => {
    if (!req.path.startsWith(PROTECTED_PREFIX) && req.path !== '/v1') {
      next();
      return;
    }
    next(BEARER.test(req.headers.authorization ?? '') ? undefined : unauthorized());
  };
}
