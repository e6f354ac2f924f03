import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, provablyNotSent } from '../failure.classifier';
import { StdioNotConnectedError } from '../transport/process-group-stdio.transport';
import {
  UpstreamConnectionError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamProtocolError,
  UpstreamRequestBrokenError,
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  UpstreamTimeoutError,
} from '../upstream.errors';

/** What the connection knew when a request failed. */
export interface FailureContext {
  server: string;
  timeoutMs: number;
  /** The request carried an Mcp-Session-Id header. */
  hadSession: boolean;
  /** The transport had closed (child exit, socket gone) when the request failed. */
  transportClosed: boolean;
  /** Streamable HTTP or SSE: each request is its own HTTP exchange. */
  http?: boolean;
}

function isZodError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ZodError';
}

/**
 * Maps what the SDK throws to the typed errors callers branch on. `maybeSent` is false only when
 * the failure proves the request was never processed (refused connection, dead child, an HTTP 4xx
 * before any JSON-RPC handling, a forgotten session).
 */
export function mapRequestError(error: unknown, context: FailureContext): UpstreamError {
  const { server } = context;
  if (error instanceof UpstreamError) return error;
  if (error instanceof McpError) {
    if (
      error.code === (ErrorCode.RequestTimeout as number) &&
      (error.data as { timeout?: unknown })?.timeout
    ) {
      return new UpstreamTimeoutError(server, context.timeoutMs);
    }
    if (error.code === (ErrorCode.ConnectionClosed as number) && context.transportClosed) {
      return new UpstreamConnectionError(server, 'the connection closed during the request', true, {
        cause: error,
      });
    }
    return new UpstreamRpcError(server, error.code, describe(error));
  }
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    const status = typeof error.code === 'number' ? error.code : -1;
    if (status === 404 && context.hadSession) return new UpstreamSessionExpiredError(server);
    // An error status answered to this request (a 429, a proxy's 502): this exchange's, not the
    // session's (requirement 6). The SDK's words, with the body it quotes, stay in the cause.
    if (status >= 400) return new UpstreamHttpError(server, status, undefined, { cause: error });
    return new UpstreamConnectionError(server, describe(error), true, { cause: error });
  }
  if (error instanceof StdioNotConnectedError) {
    return new UpstreamConnectionError(server, error.message, false, { cause: error });
  }
  if (error instanceof Error && error.message === 'Not connected') {
    return new UpstreamConnectionError(server, 'not connected', false, { cause: error });
  }
  if (isZodError(error))
    return new UpstreamProtocolError(server, describe(error), { cause: error });
  const notSent = provablyNotSent(error);
  // Over HTTP a socket reset or a cut answer is this request's exchange, not the session's: the
  // request may have been processed, the session lives on (a dead server refuses the next one).
  if (context.http && !notSent && !context.transportClosed) {
    return new UpstreamRequestBrokenError(server, describe(error), { cause: error });
  }
  return new UpstreamConnectionError(server, describe(error), !notSent, { cause: error });
}
