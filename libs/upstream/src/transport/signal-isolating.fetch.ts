import { setMaxListeners } from 'node:events';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { withTraceHeaders } from '@app/tracing';
import { httpFetch, NULL_BODY_STATUSES } from './http.fetch';
import { MessageCounter, MessageTooLargeError, messageCounter } from './message-bound';

/** A JSON-RPC request ID. */
export type RequestId = string | number;

/**
 * The IDs of the JSON-RPC requests a POST body carries (one message or a batch): the requests
 * whose answers that POST's response stream was to bring. Empty when the body is not readable.
 */
export function jsonRpcRequestIds(body: unknown): RequestId[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const messages: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return messages.flatMap((m) => {
    const id = (m as { id?: unknown; method?: unknown } | null)?.id;
    const method = (m as { method?: unknown } | null)?.method;
    return typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')
      ? [id]
      : [];
  });
}

/**
 * A fetch that gives every request its own AbortSignal, bridged from the caller's, and with
 * `maxMessageBytes` bounds each message of the answer as it streams in (docs/connections.md,
 * "Message size"): the one body wrapper of every upstream HTTP request does both.
 *
 * The SDK's HTTP transports pass one transport-wide signal to every fetch, and Node's fetch
 * (undici) adds an abort listener to that signal per request that it removes only on abort or
 * garbage collection. On a pooled session polled hundreds of times a second the shared signal
 * collected thousands of listeners (MaxListenersExceededWarning) and the poller's memory grew
 * (docs/benchmarks.md, memory). Here undici listens on a private signal that dies with its
 * request; the one bridge listener on the shared signal is removed as soon as the response body
 * ends, fails or is cancelled, so an abort still reaches a body being streamed (SSE).
 */
export function signalIsolatingFetch(
  base: FetchLike = httpFetch,
  onPostBodyBroken?: (error: unknown, requestIds: RequestId[]) => void,
  maxMessageBytes?: number,
): FetchLike {
  return async (url, given) => {
    // Every upstream request carries the current attempt's traceparent (none when tracing is off).
    const init = withTraceHeaders(given);
    const parent = init?.signal;
    if (parent?.aborted) return base(url, init);
    let release = (): void => undefined;
    let own: AbortController | undefined;
    if (parent) {
      // One bridge per request in flight, each removed when its body is done: the count follows
      // concurrency (maxConcurrentCalls), so Node's leak warning at 11 would only be noise.
      setMaxListeners(0, parent);
      const bridge = new AbortController();
      const forward = () => bridge.abort(parent.reason);
      parent.addEventListener('abort', forward, { once: true });
      release = () => parent.removeEventListener('abort', forward);
      own = bridge;
    }
    let response: Response;
    try {
      response = await base(url, own ? { ...init, signal: own.signal } : init);
    } catch (error) {
      release();
      throw error;
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
      release();
      return response;
    }
    // A POST's body carries that request's answer (an SSE stream for a long call). If it breaks
    // without our abort, the server died or the network failed: the SDK would wait for the
    // request's timeout (hours, for a held sync-call), so the owner is told at once.
    const broken = (error: unknown) => {
      if (init?.method === 'POST' && !parent?.aborted) {
        onPostBodyBroken?.(error, jsonRpcRequestIds(init.body));
      }
    };
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const bound =
      maxMessageBytes === undefined ? undefined : messageCounter(maxMessageBytes, eventStream);
    return new Response(releasingBody(response.body, release, broken, bound), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The same bytes; `release` runs once the stream is done with, however that happens. `bound`
 * sees each chunk first: false fails the stream with {@link MessageTooLargeError} and cancels the
 * source, so the rest is not downloaded.
 */
function releasingBody(
  source: ReadableStream<Uint8Array>,
  release: () => void,
  broken: (error: unknown) => void,
  bound?: MessageCounter,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  // Set when the consumer cancels: a read still pending then settles into a closed controller.
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        release();
        if (cancelled) return;
        broken(error);
        controller.error(error);
        return;
      }
      if (cancelled) return;
      if (chunk.done) {
        release();
        controller.close();
      } else if (bound && !bound.accepts(chunk.value)) {
        const error = new MessageTooLargeError(bound.maxBytes);
        release();
        broken(error);
        controller.error(error);
        await reader.cancel(error).catch(() => undefined);
      } else {
        controller.enqueue(chunk.value);
      }
    },
    async cancel(reason) {
      cancelled = true;
      release();
      await reader.cancel(reason);
    },
  });
}
