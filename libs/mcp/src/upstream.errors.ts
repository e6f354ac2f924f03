/**
 * Typed failures of the connection layer. Every one says whether the request may have reached
 * the upstream (`maybeSent`): submit safety (contracts.md) depends on it.
 */
export abstract class UpstreamError extends Error {
  abstract readonly maybeSent: boolean;
  constructor(
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No usable session: connecting, degraded or parked. Nothing was sent. */
export class UpstreamUnavailableError extends UpstreamError {
  override readonly name = 'UpstreamUnavailableError';
  readonly maybeSent = false;
  constructor(
    server: string,
    readonly state: string,
    readonly reason: string,
  ) {
    super(server, `server "${server}" is ${state}: ${reason}`);
  }
}

/** The request was written and no answer came before its deadline. */
export class UpstreamTimeoutError extends UpstreamError {
  override readonly name = 'UpstreamTimeoutError';
  readonly maybeSent = true;
  constructor(
    server: string,
    readonly timeoutMs: number,
  ) {
    super(server, `server "${server}" did not answer within ${timeoutMs} ms`);
  }
}

/** The transport failed (process died, socket closed, teardown) while or before sending. */
export class UpstreamConnectionError extends UpstreamError {
  override readonly name: string = 'UpstreamConnectionError';
  constructor(
    server: string,
    message: string,
    readonly maybeSent: boolean,
    options?: { cause?: unknown },
  ) {
    super(server, message, options);
  }
}

/** The server refused the HTTP request without a JSON-RPC answer; a 4xx was not processed. */
export class UpstreamHttpError extends UpstreamConnectionError {
  override readonly name = 'UpstreamHttpError';
  constructor(
    server: string,
    readonly status: number,
  ) {
    super(server, `HTTP ${status} from the server`, status >= 500);
  }
}

/**
 * One request's HTTP exchange broke mid-answer (its response stream or socket failed) while the
 * session itself may be fine: on Streamable HTTP every request is its own POST. It fails only
 * that request, possibly sent; it is no reason to tear down the session and fail its siblings
 * (connections.md requirement 6). A dead server shows itself on the health check that follows.
 */
export class UpstreamRequestBrokenError extends UpstreamConnectionError {
  override readonly name = 'UpstreamRequestBrokenError';
  constructor(server: string, detail: string, options?: { cause?: unknown }) {
    super(server, `the answer to this request broke off (${detail})`, true, options);
  }
}

/** A Streamable HTTP session the server no longer knows (HTTP 404 with Mcp-Session-Id). */
export class UpstreamSessionExpiredError extends UpstreamError {
  override readonly name = 'UpstreamSessionExpiredError';
  readonly maybeSent = false;
  constructor(server: string) {
    super(server, `server "${server}" no longer knows the session`);
  }
}

/** The upstream answered with a JSON-RPC error. It saw the request. */
export class UpstreamRpcError extends UpstreamError {
  override readonly name = 'UpstreamRpcError';
  readonly maybeSent = true;
  constructor(
    server: string,
    readonly code: number,
    message: string,
  ) {
    super(server, `server "${server}" answered error ${code}: ${message}`);
  }
}

/** The upstream answered, but not with a valid MCP result (a schema mismatch). It saw the request. */
export class UpstreamProtocolError extends UpstreamError {
  override readonly name = 'UpstreamProtocolError';
  readonly maybeSent = true;
  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super(server, `server "${server}" sent an invalid answer: ${message}`, options);
  }
}
