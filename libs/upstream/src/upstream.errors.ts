import { isAttemptDeadline } from '@app/common';

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

/**
 * The server (or a proxy in front of it) refused the HTTP request without a JSON-RPC answer; a
 * 4xx was not processed. An answer to that one exchange: on a 2025-11-25 session it does not end
 * the session by itself (docs/connections.md, requirement 6), except a 404 (requirement 7).
 */
export class UpstreamHttpError extends UpstreamConnectionError {
  override readonly name = 'UpstreamHttpError';
  constructor(
    server: string,
    readonly status: number,
    /** The answer's `Retry-After`, in ms from when it came (a 429 or a 503 may carry one). */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(server, `HTTP ${status} from the server`, status >= 500, options);
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

/**
 * The attempt's deadline (docs/leases.md, "Attempt deadlines") cut this step short. Like a
 * timeout it says whether the request may have been sent: a wait for a connection sent nothing,
 * a request already handed to the transport may have been processed.
 */
export class UpstreamDeadlineError extends UpstreamError {
  override readonly name = 'UpstreamDeadlineError';
  constructor(
    server: string,
    readonly maybeSent: boolean,
    step: string,
  ) {
    super(server, `server "${server}": ${step} cut short by the attempt's deadline`);
  }
}

/**
 * What a step ended by the caller's signal throws: the attempt's deadline becomes an
 * {@link UpstreamDeadlineError}; any other abort passes its reason through (the poller knows why).
 */
export function abortedStepError(
  server: string,
  signal: AbortSignal,
  maybeSent: boolean,
  step: string,
): unknown {
  return isAttemptDeadline(signal)
    ? new UpstreamDeadlineError(server, maybeSent, step)
    : signal.reason;
}

/**
 * Waits for `work` (a connect, a discovery), or rejects as soon as `signal` aborts: nothing was
 * sent on the caller's behalf. The work itself goes on under its own bound (connectTimeoutMs),
 * since other callers may share it.
 */
export async function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  server: string,
  step: string,
): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    throw abortedStepError(server, signal, false, step);
  }
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    // The poller's own abort reason passes through as given, as `send` rethrows it.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    onAbort = () => reject(abortedStepError(server, signal, false, step));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    work.catch(() => undefined);
    signal.removeEventListener('abort', onAbort!);
  }
}
