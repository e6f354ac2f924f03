import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** Statuses whose Response must not carry a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A fetch that gives every request its own AbortSignal, bridged from the caller's.
 *
 * The SDK's HTTP transports pass one transport-wide signal to every fetch, and Node's fetch
 * (undici) adds an abort listener to that signal per request that it removes only on abort or
 * garbage collection. On a pooled session polled hundreds of times a second the shared signal
 * collected thousands of listeners (MaxListenersExceededWarning) and the poller's memory grew
 * (docs/benchmarks.md, memory). Here undici listens on a private signal that dies with its
 * request; the one bridge listener on the shared signal is removed as soon as the response body
 * ends, fails or is cancelled, so an abort still reaches a body being streamed (SSE).
 */
export function signalIsolatingFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const parent = init?.signal;
    if (!parent || parent.aborted) return base(url, init);
    const own = new AbortController();
    const forward = () => own.abort(parent.reason);
    parent.addEventListener('abort', forward, { once: true });
    const release = () => parent.removeEventListener('abort', forward);
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (error) {
      release();
      throw error;
    }
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) {
      release();
      return response;
    }
    return new Response(releasingBody(response.body, release), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The same bytes; `release` runs once the stream is done with, however that happens. */
function releasingBody(
  source: ReadableStream<Uint8Array>,
  release: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason);
    },
  });
}
