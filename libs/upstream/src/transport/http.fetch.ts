import { setMaxListeners } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * The fetch every upstream HTTP request goes through (docs/connections.md, "The HTTP client"):
 * Node's own `http`/`https` with a keep-alive agent, answering with a web `Response` as the MCP
 * SDK expects. Why not Node's `fetch`: an MCP tool call through the SDK cost its client 1,370 µs
 * of CPU with `fetch` and 890 µs with this on Node 20, 678 and 371 µs on Node 24, and a poller's
 * CPU per poll fell by a fifth (docs/benchmarks.md, "The upstream HTTP client").
 *
 * It does what `fetch` does for the requests the gateway makes, and leaves the rest to `fetch`:
 * - a body that is a string or bytes (every JSON-RPC POST); any other body (a form, a stream) is
 *   sent by `fetch`;
 * - `redirect`: `manual` answers the 3xx as it is (the SDK follows redirects within the origin
 *   itself), `error` fails on one, and `follow` hands the request to `fetch`, which follows it;
 * - `signal`: an abort fails the request, or the body being read, with the signal's reason;
 * - a request that never got an answer fails as `fetch` fails, `TypeError('fetch failed')` with
 *   the socket's error as its `cause` (ECONNREFUSED…: failure.classifier.ts reads it there); a
 *   body cut off fails with `TypeError('terminated')`, its cause likewise;
 * - a gzip or deflate answer is decompressed as it streams (the request offers both, as `fetch`
 *   does), flushed chunk by chunk so an SSE event is never held back.
 * An idle connection is kept 4 s (fetch's default), or the server's `Keep-Alive: timeout` hint
 * less a second when that is shorter, so that a request is not sent on a connection the server
 * is about to close (a server that closes sooner than it says can still cut one off, as with
 * `fetch`).
 *
 * `watch` sees each answer's body as it streams, in the one web stream the answer has: the body
 * wrapper of upstream requests bounds messages and notices a broken answer there
 * (signal-isolating.fetch.ts) instead of wrapping the body in a second stream.
 */
export function httpClient(options: HttpClientOptions = {}): FetchLike {
  const { watch, fallback = fetch } = options;
  return (input, init = {}) => {
    const url = typeof input === 'string' ? parsedUrl(input) : input;
    const body = init.body;
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      // fetch refuses a URL with credentials in it; `http` would send them as Basic auth.
      url.username ||
      url.password ||
      !(
        body === undefined ||
        body === null ||
        typeof body === 'string' ||
        body instanceof Uint8Array
      )
    ) {
      return fallback(input, init);
    }
    return sent(url, body ?? undefined, init, watch, () => fallback(input, init));
  };
}

/** The gateway's HTTP client with nothing watching its bodies (docs/connections.md). */
export const httpFetch: FetchLike = httpClient();

/** Hooks on one answer's body, given by {@link HttpClientOptions.watch}. */
export interface BodyWatch {
  /** Sees each chunk before the reader does: an error fails the body with it, unread rest and all. */
  check?(chunk: Uint8Array): Error | undefined;
  /** The body failed, by `check` or by the connection, not by the request's abort or a cancel. */
  broken?(error: unknown): void;
}

export interface HttpClientOptions {
  /** The hooks for an answer with a body, from its request and headers (none: undefined). */
  watch?(init: RequestInit, headers: Headers): BodyWatch | undefined;
  /** What sends the requests this client leaves to `fetch` (the list above): `fetch` itself. */
  fallback?: FetchLike;
}

/** Sends one request this client handles itself; `follow` sends it to follow a redirect. */
function sent(
  url: URL,
  body: string | Uint8Array | undefined,
  init: RequestInit,
  watch: HttpClientOptions['watch'],
  follow: () => Promise<Response>,
): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  const method = (init.method ?? 'GET').toUpperCase();
  return new Promise<Response>((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(url, {
      method,
      headers: requestHeaders(init.headers, body),
      agent: secure ? HTTPS_AGENT : HTTP_AGENT,
    });
    /** The body's stream once the answer came; before that, the promise is what fails. */
    let answer: BodySource | undefined;
    const onAbort = (): void => {
      request.destroy();
      if (answer) answer.fail(signal?.reason);
      else reject(signal?.reason as Error);
    };
    const done = (): void => signal?.removeEventListener('abort', onAbort);
    // A transport passes one signal to all its requests: one listener per request in flight,
    // each removed when its answer is done, so the count follows the server's maxConcurrentCalls
    // (16 by default) and Node's leak warning, from the 11th, would only alarm an operator.
    if (signal) setMaxListeners(0, signal);
    signal?.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error) => {
      done();
      if (answer) answer.fail(new TypeError('terminated', { cause: error }), true);
      else reject(new TypeError('fetch failed', { cause: error }));
    });
    request.on('response', (res) => {
      try {
        answer = answerWith(res);
      } catch (error) {
        // An answer no Response can hold (a status outside 200 to 599, a header value fetch
        // refuses): fetch fails such an answer too, and it must not throw in this listener.
        res.destroy();
        done();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    /** Resolves the request with `res`: a Response, a redirect as asked, or `fetch`'s answer. */
    const answerWith = (res: http.IncomingMessage): BodySource | undefined => {
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location && init.redirect !== 'manual') {
        res.resume();
        done();
        if (init.redirect === 'error') {
          reject(new TypeError('fetch failed', { cause: new Error('unexpected redirect') }));
        } else {
          resolve(follow());
        }
        return undefined;
      }
      const headers = new Headers();
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      }
      const meta = { status, statusText: res.statusMessage ?? '', headers };
      if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
        const response = new Response(null, meta);
        res.resume();
        done();
        resolve(response);
        return undefined;
      }
      // Before the body's stream starts reading: the Response below would refuse these.
      if (status < 200 || status > 599) throw new RangeError(`status ${status}`);
      const source = new BodySource(res, decoded(res), done, watch?.(init, headers));
      resolve(new Response(source.stream, meta));
      return source;
    };
    request.end(body);
  });
}

/** The URL, or undefined when it is not one (`fetch` then fails the request as it does). */
function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Statuses answered with a redirect's `Location`. */
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Statuses whose `Response` must not carry a body. */
export const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 204, 205, 304]);
/** How long an idle connection is kept when the server gives no `Keep-Alive` hint (fetch's). */
const IDLE_CONNECTION_MS = 4_000;
const HTTP_AGENT = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
const HTTPS_AGENT = new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });

/** The request's headers with what `fetch` adds when they are absent, as one plain object. */
function requestHeaders(
  given: RequestInit['headers'],
  body: string | Uint8Array | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {
    accept: '*/*',
    'accept-encoding': 'gzip, deflate',
    'user-agent': 'node',
  };
  for (const [name, value] of new Headers(given)) headers[name] = value;
  if (body !== undefined) {
    headers['content-length'] = String(
      typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength,
    );
    if (typeof body === 'string') headers['content-type'] ??= 'text/plain;charset=UTF-8';
  }
  return headers;
}

/** The answer's bytes as sent, or decompressed when it says gzip or deflate. */
function decoded(res: http.IncomingMessage): Readable {
  const coding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? zlib.createGunzip(flush)
      : coding === 'deflate'
        ? zlib.createInflate(flush)
        : undefined;
  if (!decoder) return res;
  res.on('error', (error) => decoder.destroy(error));
  return res.pipe(decoder);
}

/**
 * A web stream of a Node stream's chunks, read as the consumer pulls (the socket pauses while
 * the consumer has a chunk waiting). It ends when the answer ends, fails when the connection
 * drops first, `watch` refuses a chunk or {@link fail} is called, and a consumer's cancel closes
 * the connection.
 */
class BodySource {
  readonly stream: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private finished = false;

  constructor(
    private readonly res: http.IncomingMessage,
    source: Readable,
    private readonly done: () => void,
    private readonly watch?: BodyWatch,
  ) {
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      pull: () => {
        source.resume();
      },
      cancel: () => {
        this.finish();
        res.destroy();
      },
    });
    source.pause();
    source.on('data', (chunk: Buffer) => {
      if (this.finished) return;
      const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      let refused: unknown;
      try {
        refused = this.watch?.check?.(bytes);
      } catch (error) {
        refused = error; // as a refusal: never thrown in the socket's listener
      }
      if (refused) return this.fail(refused, true);
      this.controller.enqueue(bytes);
      if ((this.controller.desiredSize ?? 0) <= 0) source.pause();
    });
    source.on('end', () => {
      if (this.finish()) this.controller.close();
    });
    source.on('error', (error) => this.fail(new TypeError('terminated', { cause: error }), true));
    // A connection that closes before the answer's end: `end` never comes.
    res.on('close', () => {
      if (!res.complete) this.fail(new TypeError('terminated', { cause: socketError(res) }), true);
    });
  }

  /**
   * Fails the stream with `reason` unless it has ended, and lets go of the connection; `broken`:
   * the body broke (the watch is told), rather than being aborted by its request's signal.
   */
  fail(reason: unknown, broken = false): void {
    if (!this.finish()) return;
    this.res.destroy();
    let failure = reason;
    try {
      if (broken) this.watch?.broken?.(reason);
    } catch (error) {
      // Not thrown in a socket's listener, where it would end the process: the reader gets it.
      failure = error;
    }
    this.controller.error(failure);
  }

  /** True the first time: the stream is done with, however that happened. */
  private finish(): boolean {
    if (this.finished) return false;
    this.finished = true;
    this.done();
    return true;
  }
}

/** What a connection closed early says: its socket's error when it had one. */
function socketError(res: http.IncomingMessage): Error {
  const socket = res.socket as (Socket & { errored?: Error | null }) | null;
  return socket?.errored ?? new Error('other side closed');
}
