import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { UpstreamHttpError } from './upstream.errors';

/** How a failed connect attempt is treated: permanent failures park the server at once. */
export interface FailureClass {
  permanent: boolean;
  /** A short human reason for logs and the catalog; never contains headers or env values. */
  reason: string;
  /** The server's `Retry-After` (an HTTP 429 or 503, transport/retry-after.ts), for the backoff. */
  retryAfterMs?: number;
}

/** The error and every `cause` below it (bounded: causes can, in theory, form a cycle). */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && chain.length < 10;) {
    chain.push(current);
    // Not `instanceof Error`: fetch's errors may come from another realm (a VM context).
    current =
      typeof current === 'object' && current !== null
        ? (current as { cause?: unknown }).cause
        : undefined;
  }
  return chain;
}

/**
 * How long the upstream asked to be left alone (`Retry-After` on an HTTP 429 or 503, either era:
 * transport/retry-after.ts), found anywhere in the error's `cause` chain; undefined when it said
 * nothing.
 */
export function upstreamRetryAfterMs(error: unknown): number | undefined {
  for (const link of causeChain(error)) {
    if (link instanceof UpstreamHttpError && link.retryAfterMs !== undefined) {
      return link.retryAfterMs;
    }
  }
  return undefined;
}

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function describe(error: unknown): string {
  let text = error instanceof Error ? error.message : String(error);
  // "fetch failed" alone says nothing: name the root cause (ECONNREFUSED, ENOTFOUND…).
  const root = causeChain(error).at(-1);
  if (root !== error)
    text += ` (${errorCode(root) ?? (root instanceof Error ? root.message : '')})`;
  // Bounded: an HTML page or a stack of causes must not flood the catalog.
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The HTTP status an upstream answered with, where the error carries one. */
export function httpStatus(error: unknown): number | undefined {
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    return typeof error.code === 'number' ? error.code : undefined;
  }
  // The 2026-07-28 side's own client (stateless-http.client.ts), and a 429 or 503 with
  // Retry-After on either side (transport/retry-after.ts).
  if (error instanceof UpstreamHttpError) return error.status;
  return undefined;
}

/**
 * Classifies a connect failure (spawn, initialize, the first tools/list; on the 2026-07-28 side
 * `server/discover` and `tools/list`). Permanent: the things
 * retrying cannot heal (connections.md requirement 5). Everything else is transient and goes
 * through backoff.
 */
export function classifyConnectFailure(error: unknown): FailureClass {
  const errorStatus = causeChain(error)
    .map(httpStatus)
    .find((status) => status !== undefined && status >= 400);
  for (const link of causeChain(error)) {
    const code = errorCode(link);
    const message = link instanceof Error ? link.message : String(link);
    if (code === 'ENOENT' && /spawn/i.test(message)) {
      return { permanent: true, reason: `command not found (${describe(link)})` };
    }
    if (code === 'EACCES' && /spawn/i.test(message)) {
      return { permanent: true, reason: `command not executable (${describe(link)})` };
    }
    if (code === 'ERR_INVALID_URL' || link instanceof InvalidUrlError) {
      return { permanent: true, reason: `invalid URL (${describe(link)})` };
    }
    const status = httpStatus(link);
    if (status === 401 || status === 403 || link instanceof UnauthorizedError) {
      return { permanent: true, reason: `not authorized at connect (HTTP ${status ?? 401})` };
    }
    // An error status's message carries the answer's body (wrappers copy it), and a proxy's
    // 502 or 503 page is HTML: that is the server being away, not a web page where an MCP
    // endpoint should be. A web page with success is (the SDK's status -1, "Unexpected content
    // type: text/html").
    if (errorStatus === undefined && /text\/html/i.test(message)) {
      return { permanent: true, reason: 'not an MCP endpoint: it answers with HTML' };
    }
    if (/protocol version is not supported/i.test(message)) {
      return { permanent: true, reason: describe(link) };
    }
  }
  return { permanent: false, reason: describe(error), retryAfterMs: upstreamRetryAfterMs(error) };
}

/** Thrown by the transport factory for a URL that is not http(s) with a host. */
export class InvalidUrlError extends Error {
  override readonly name = 'InvalidUrlError';
}

/**
 * True when the error proves the request never left this process: the connection was refused or
 * the name did not resolve, so nothing reached the upstream.
 */
export function provablyNotSent(error: unknown): boolean {
  return causeChain(error).some((link) => {
    const code = errorCode(link);
    return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
  });
}
