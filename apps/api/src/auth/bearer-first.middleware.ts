import type { Request, RequestHandler } from 'express';
import type { IncomingHttpHeaders } from 'node:http';
import { Refusal, Unauthenticated } from '../refusals/refusal';

/** `Authorization: Bearer <token>`: the token's characters per RFC 6750 (b64token). */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The token of a well-formed `Authorization: Bearer <token>` header, else undefined: the one
 * syntax check of the bearer-first middleware, the guard, the submit fast path and `/mcp`.
 */
export function bearerToken(req: { headers: IncomingHttpHeaders }): string | undefined {
  return BEARER.exec(req.headers.authorization ?? '')?.[1];
}

/** Every route under this prefix needs a token; the public ones (health, OpenAPI) live outside. */
const PROTECTED_PREFIX = '/v1/';

/** The one 401 every authentication failure answers with, the guard's and this middleware's. */
export function unauthorized(): Refusal {
  return new Unauthenticated();
}

/** The MCP front door's own check before its body is read: `McpRequestGuard.earlyRefusal`. */
export interface McpEarlyCheck {
  earlyRefusal(req: Request): Refusal | null;
}

/**
 * Refuses a request under `/v1/` that carries no well-formed bearer token before anything reads
 * its body: an anonymous caller must not make the API parse up to 1 MiB of JSON, nor learn from
 * a 413 or a 415 what it would accept. Only the syntax is checked here (no I/O); the
 * {@link AuthGuard} verifies the token itself once the route is known.
 *
 * The path is compared as Express routes it: without regard to case and to trailing slashes
 * (`/V1/threads/…` and `/mcp/` reach the same handlers as `/v1/threads/…` and `/mcp`). `/mcp`
 * gets the front door's own early refusal (its Origin rule first, its 401 with the
 * protected-resource challenge; no token needed when MCP_ANONYMOUS_USER is set).
 */
export function bearerFirstMiddleware(mcp: McpEarlyCheck): RequestHandler {
  const bearerFirst: RequestHandler = (req, _res, next) => {
    const path = req.path.toLowerCase().replace(/\/+$/, '');
    if (path === '/mcp') {
      // DELETE reads no body and answers 405 to anyone (no sessions); OPTIONS is a preflight.
      const exempt = req.method === 'DELETE' || req.method === 'OPTIONS';
      const refusal = exempt ? null : mcp.earlyRefusal(req);
      next(refusal ?? undefined);
      return;
    }
    if (!`${path}/`.startsWith(PROTECTED_PREFIX)) {
      next();
      return;
    }
    next(bearerToken(req) !== undefined ? undefined : unauthorized());
  };
  return bearerFirst;
}
