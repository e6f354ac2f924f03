import { isRecord } from '@app/common';
import { refusesStateless } from '../protocol-era.rules';
import { UpstreamProtocolError, UpstreamRpcError } from '../upstream.errors';

// Reading a 2026-07-28 answer's JSON-RPC message, the same over HTTP and over stdio.

/** A JSON-RPC error answer is an `UpstreamRpcError` (the server saw the request). */
export function throwIfRpcError(server: string, message: unknown): void {
  if (!isRecord(message) || !isRecord(message.error)) return;
  const { code, message: why } = message.error;
  if (typeof code === 'number') {
    throw new UpstreamRpcError(server, code, typeof why === 'string' ? why : '');
  }
}

/** The `result` object of the response to request `id`; anything else breaks the protocol. */
export function resultOf(server: string, message: unknown, id: number): Record<string, unknown> {
  if (!isRecord(message) || message.id !== id || !isRecord(message.result)) {
    throw new UpstreamProtocolError(
      server,
      'the answer is not a JSON-RPC response with a result object for the request',
    );
  }
  return message.result;
}

/**
 * Tells `onRefused` of a request refused the way a server that stopped speaking 2026-07-28
 * refuses it (`server/discover` aside: its refusal is the era's own question). Returns `error`.
 */
export function noteRefusal(
  method: string,
  error: unknown,
  onRefused?: (method: string, error: unknown) => void,
): unknown {
  if (method !== 'server/discover' && refusesStateless(error)) onRefused?.(method, error);
  return error;
}
