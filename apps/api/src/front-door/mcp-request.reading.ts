import type { Request } from 'express';
import { randomBytes } from 'node:crypto';
import { isRecord } from '@app/common';
import { ErrorCode2026, JsonRpcWireError } from '@app/wire';
import { Principal } from '../auth/token-verifier.service';
import { McpClientScope } from './2025/held-calls.registry';

// What McpController reads off a request before either era's handler sees it: the JSON-RPC
// message's shape and ID, the HTTP headers and query it answers by, and the 2025-11-25 client
// scope. Pure functions of the request; the controller decides what to do with them.

/** A JSON-RPC request ID as answered: null when the message has none the server can read. */
export type JsonRpcId = string | number | null;

export function invalidRequest(message: string): JsonRpcWireError {
  return new JsonRpcWireError(ErrorCode2026.InvalidRequest, `Invalid Request: ${message}`);
}

/** A JSON-RPC response (to a request the server sent): an ID, a result or an error, no method. */
export function isClientResponse(body: unknown): body is Record<string, unknown> {
  return (
    isRecord(body) &&
    body.jsonrpc === '2.0' &&
    body.method === undefined &&
    (typeof body.id === 'string' || typeof body.id === 'number') &&
    ('result' in body || 'error' in body)
  );
}

export function idOf(body: unknown): JsonRpcId {
  if (!isRecord(body)) return null;
  return typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
}

export function acceptsStream(req: Request): boolean {
  return String(req.headers.accept ?? '').includes('text/event-stream');
}

/**
 * A 2025-11-25 session ID, issued by `initialize` and stored nowhere: any replica takes any
 * value, and it grants nothing. Clients echo it on every request, which is what lets a
 * `notifications/cancelled` name only its own client's requests (HeldCallsRegistry).
 */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** The client a request comes from, as narrowly as the front door can tell. */
export function clientScope(req: Request, principal: Principal): McpClientScope {
  const session = req.headers['mcp-session-id'];
  return { userId: principal.userId, session: typeof session === 'string' ? session : '' };
}

export function urlThread(req: Request): string | undefined {
  const thread = req.query.thread;
  return typeof thread === 'string' ? thread : undefined;
}
