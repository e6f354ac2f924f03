import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UpstreamHttpError } from '../upstream.errors';

/**
 * A `Retry-After` header in milliseconds from now: delay-seconds or an HTTP date (RFC 9110,
 * 10.2.3); undefined when absent, unreadable or not in the future.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * The 2025-11-25 side's requests (POSTs) answered HTTP 429 or 503 with a `Retry-After` fail here,
 * as the {@link UpstreamHttpError} the 2026-07-28 client throws for them, which keeps the header
 * for the backoff (docs/leases.md, "Scheduling after an attempt"): the SDK's own error for such
 * an answer keeps the status alone. The SDK passes a failed fetch on unchanged, so the request
 * fails with it. Anything else (no header, another status, a GET stream) is the SDK's as before.
 */
export function retryAfterFetch(base: FetchLike, server: string): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (init?.method !== 'POST' || (response.status !== 429 && response.status !== 503)) {
      return response;
    }
    const after = retryAfterMs(response.headers.get('retry-after'));
    if (after === undefined) return response;
    await response.body?.cancel().catch(() => undefined);
    throw new UpstreamHttpError(server, response.status, after);
  };
}
