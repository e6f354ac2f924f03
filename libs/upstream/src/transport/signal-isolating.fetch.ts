import { setMaxListeners } from 'node:events';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { withTraceHeaders } from '@app/tracing';
import { type BodyWatch, httpClient, NULL_BODY_STATUSES } from './http.fetch';
import { MessageTooLargeError, messageCounter } from './message-bound';

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
 * The one body wrapper of every upstream HTTP request: it adds the attempt's traceparent, bounds
 * each message of the answer with `maxMessageBytes` as it streams in (docs/connections.md,
 * "Message size"), and tells `onPostBodyBroken` when a POST's answer breaks mid-stream.
 *
 * With no `base`, the gateway's HTTP client (http.fetch.ts) sends the request and does the
 * watching in its own body stream: one web stream per answer. It removes its abort listener from
 * the caller's signal as soon as the body is done with, so the SDK's transport-wide signal never
 * collects listeners.
 *
 * Any other `base` (Node's `fetch`, which the gateway's client hands some requests to: a form
 * body, a redirect to follow) gets its own AbortSignal per request, bridged from the caller's,
 * and a second stream around its body that does the watching. The SDK's HTTP transports pass one
 * transport-wide signal to every fetch, and Node's fetch (undici) adds an abort listener to that
 * signal per request that it removes only on abort or garbage collection: on a pooled session
 * polled hundreds of times a second the shared signal collected thousands of listeners
 * (MaxListenersExceededWarning) and the poller's memory grew (docs/benchmarks.md, memory). Here
 * undici listens on a private signal that dies with its request; the one bridge listener on the
 * shared signal is removed as soon as the response body ends, fails or is cancelled, so an abort
 * still reaches a body being streamed (SSE).
 */
export function signalIsolatingFetch(
  base?: FetchLike,
  onPostBodyBroken?: (error: unknown, requestIds: RequestId[]) => void,
  maxMessageBytes?: number,
): FetchLike {
  const watch = (init: RequestInit, headers: Headers): BodyWatch =>
    bodyWatch(init, headers, onPostBodyBroken, maxMessageBytes);
  const send = base
    ? bridgedFetch(base, watch)
    : httpClient({ watch, fallback: bridgedFetch(fetch, watch) });
  // Every upstream request carries the current attempt's traceparent (none when tracing is off).
  return (url, init) => send(url, withTraceHeaders(init));
}

/** The message bound and the broken-answer report for one answer. */
function bodyWatch(
  init: RequestInit,
  headers: Headers,
  onPostBodyBroken: ((error: unknown, requestIds: RequestId[]) => void) | undefined,
  maxMessageBytes: number | undefined,
): BodyWatch {
  const eventStream = (headers.get('content-type') ?? '').includes('text/event-stream');
  const bound =
    maxMessageBytes === undefined ? undefined : messageCounter(maxMessageBytes, eventStream);
  return {
    check:
      bound &&
      ((chunk) => (bound.accepts(chunk) ? undefined : new MessageTooLargeError(bound.maxBytes))),
    // A POST's body carries that request's answer (an SSE stream for a long call). If it breaks
    // without our abort, the server died or the network failed: the SDK would wait for the
    // request's timeout (hours, for a held sync-call), so the owner is told at once.
    broken: (error) => {
      if (init.method === 'POST' && !init.signal?.aborted) {
        onPostBodyBroken?.(error, jsonRpcRequestIds(init.body));
      }
    },
  };
}

/** `base` with its own signal per request and `watch` in a stream around its answer's body. */
function bridgedFetch(
  base: FetchLike,
  watch: (init: RequestInit, headers: Headers) => BodyWatch,
): FetchLike {
  return async (url, init) => {
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
    return new Response(watchedBody(response.body, release, watch(init ?? {}, response.headers)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The same bytes; `release` runs once the stream is done with, however that happens. `watch`
 * sees each chunk first: an error from its `check` fails the stream with it and cancels the
 * source, so the rest is not downloaded.
 */
function watchedBody(
  source: ReadableStream<Uint8Array>,
  release: () => void,
  watch: BodyWatch,
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
        watch.broken?.(error);
        controller.error(error);
        return;
      }
      if (cancelled) return;
      const refused = chunk.done ? undefined : watch.check?.(chunk.value);
      if (chunk.done) {
        release();
        controller.close();
      } else if (refused) {
        release();
        watch.broken?.(refused);
        controller.error(refused);
        await reader.cancel(refused).catch(() => undefined);
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
