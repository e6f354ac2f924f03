import { Contract } from '@app/common';
import type { ServerConfig } from '@app/config';
import { TASKS_EXTENSION } from '@app/wire';
import {
  ErrorCode,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { causeChain, httpStatus } from './failure.classifier';
import { UpstreamHttpError, UpstreamRpcError } from './upstream.errors';

export const LEGACY_ERA = '2025-11-25';
export const STATELESS_ERA = '2026-07-28';

/**
 * The 2026 side re-asks `server/discover` and `tools/list` after the shorter of their `ttlMs`,
 * held between these bounds (docs/connections.md, "Which side serves"). A `ttlMs` of 0 ("do not
 * cache") would otherwise be a tight loop: 5 s costs two small POSTs per server per worker. The
 * ceiling is the server's `keepaliveIntervalMs` (default 30 s): a server is never left unasked
 * longer than an idle 2025-11-25 session goes without a ping.
 */
export const MIN_REASK_MS = 5000;

/** When the 2026 side asks again, from the `ttlMs` values its answers carried. */
export function reaskDelayMs(ttls: unknown[], config: Pick<ServerConfig, 'keepaliveIntervalMs'>) {
  const ceiling = Math.max(MIN_REASK_MS, config.keepaliveIntervalMs);
  const given = ttls.filter((ttl): ttl is number => typeof ttl === 'number' && ttl >= 0);
  if (given.length === 0) return ceiling;
  return Math.min(ceiling, Math.max(MIN_REASK_MS, Math.min(...given)));
}

/**
 * A `server/discover` answer after which the 2026-07-28 side serves: it names the tasks extension
 * (and 2026-07-28, if it lists versions), or it lists 2026-07-28 and no version a session could
 * be opened with. The second kind has no tasks: each call answers with its result, or with
 * questions first, which the 2026-07-28 side handles; a session would only be refused
 * (docs/connections.md, "MCP 2026-07-28").
 */
export function speaksStateless(result: Record<string, unknown>): boolean {
  const capabilities = result.capabilities as { extensions?: Record<string, unknown> } | undefined;
  const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : undefined;
  if (versions !== undefined && !versions.includes(STATELESS_ERA)) return false;
  if (typeof capabilities?.extensions?.[TASKS_EXTENSION] === 'object') return true;
  return listsNoSessionVersion(result);
}

/**
 * A `server/discover` answer that lists 2026-07-28 and no version the session side's SDK can open
 * a session with: with a session refused too, the server is served without one
 * (docs/connections.md, "Which side serves").
 */
export function listsNoSessionVersion(result: Record<string, unknown>): boolean {
  const versions = Array.isArray(result.supportedVersions) ? result.supportedVersions : undefined;
  if (versions === undefined || !versions.includes(STATELESS_ERA)) return false;
  return !versions.some((v) => SESSION_VERSIONS.has(v));
}

/** The versions the session side's SDK can open a session with. */
const SESSION_VERSIONS: ReadonlySet<unknown> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

/**
 * `server/discover` was understood and refused: the server does not speak 2026-07-28. Any
 * JSON-RPC error, or an HTTP 4xx; but 401/403 (the credentials), 408 and 429 (load) say nothing
 * about the protocol.
 */
export function refusesDiscover(error: unknown): boolean {
  if (error instanceof UpstreamRpcError) return true;
  if (!(error instanceof UpstreamHttpError)) return false;
  return error.status < 500 && ![401, 403, 408, 429].includes(error.status);
}

/**
 * A session that the server's answer refused: an HTTP 4xx to `initialize` (but 401/403, the
 * credentials, and 408/429, load, say nothing about sessions), a JSON-RPC error answered to it
 * (not the SDK's own timeout or closed connection), or a protocol version it cannot accept. A
 * timeout, a lost connection or a 5xx is not one: under load a server that opens sessions would
 * otherwise be taken for one that does not (docs/connections.md, "Which side serves").
 */
export function refusesSession(error: unknown): boolean {
  return causeChain(error).some((link) => {
    const status = httpStatus(link);
    if (status !== undefined) return status >= 400 && status < 500 && !NOT_A_REFUSAL.has(status);
    if (link instanceof McpError) return !SDK_OWN_ERRORS.has(link.code);
    return link instanceof Error && /protocol version is not supported/i.test(link.message);
  });
}

const NOT_A_REFUSAL: ReadonlySet<number> = new Set([401, 403, 408, 429]);
/** The SDK's codes for what happened on this side: the connection closed, the request timed out. */
const SDK_OWN_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.ConnectionClosed,
  ErrorCode.RequestTimeout,
]);

/**
 * A 2026-07-28 request refused in a way that says the server may no longer speak 2026-07-28
 * (a redeploy): an HTTP 400, 404 or 405 without a JSON-RPC error, or the JSON-RPC codes a
 * 2025-11-25 server answers a request without a session with (-32000, "Bad Request: …"), an
 * unknown method (-32601) or an unsupported version (-32022). It triggers a new `server/discover`.
 */
export function refusesStateless(error: unknown): boolean {
  if (error instanceof UpstreamRpcError) return [-32000, -32601, -32022].includes(error.code);
  return error instanceof UpstreamHttpError && [400, 404, 405].includes(error.status);
}

/**
 * A server pinned to 2026-07-28 (over HTTP or stdio) has no session side: its `ordinary` and
 * `sync-call` toolsets call their tools with stateless requests too (docs/connections.md, "Which
 * side serves"). An unpinned HTTP server can become so at run time (`UpstreamPool`).
 */
export function sessionless(config: ServerConfig): boolean {
  return config.transport !== 'sse' && config.protocolVersion === STATELESS_ERA;
}

/**
 * The servers that may serve 2026-07-28: over HTTP or stdio, not pinned to 2025-11-25. Those
 * without a 2026-07-28 side of their own (no `mcp-tasks` toolsets over HTTP, and every unpinned
 * stdio server) ask `server/discover` only when a session is refused (docs/connections.md, "MCP
 * 2026-07-28 over stdio").
 */
export function mayServeStateless(config: ServerConfig): boolean {
  return config.transport !== 'sse' && config.protocolVersion !== LEGACY_ERA;
}

/**
 * The servers with a 2026-07-28 side from the start: pinned to 2026-07-28, or over HTTP with
 * `mcp-tasks` toolsets and not pinned to 2025-11-25.
 */
export function hasStatelessSide(config: ServerConfig): boolean {
  if (sessionless(config)) return true;
  return (
    config.transport === 'http' &&
    config.protocolVersion !== LEGACY_ERA &&
    config.toolsets.some((toolset) => toolset.contract === Contract.McpTasks)
  );
}

/**
 * From the configuration alone: unless the server is pinned to 2026-07-28, `ordinary` and
 * `sync-call` run on a 2025-11-25 session whatever else it speaks. At run time the pool may find
 * that the server refuses sessions and needs none (`UpstreamPool`).
 */
export function needsSession(config: ServerConfig): boolean {
  if (sessionless(config)) return false;
  return !hasStatelessSide(config) || config.toolsets.some((t) => t.contract !== Contract.McpTasks);
}
