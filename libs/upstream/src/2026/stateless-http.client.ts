import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { GATEWAY_VERSION, isRecord } from '@app/common';
import type { ServerConfig } from '@app/config';
import { withTraceMeta } from '@app/tracing';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  PROTOCOL_2026,
  TASKS_EXTENSION,
  encodeHeaderValue,
} from '@app/wire';
import { describe, provablyNotSent } from '../failure.classifier';
import { refusesStateless } from '../protocol-era.rules';
import { retryAfterMs } from '../transport/retry-after';
import { signalIsolatingFetch } from '../transport/signal-isolating.fetch';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamTimeoutError,
  abortedStepError,
} from '../upstream.errors';
import type { UpstreamLogger } from '../upstream.hooks';
import type { RequestOptions, StatelessRequestOptions, StatelessSession } from '../upstream.port';

/** The stateless revision this client speaks (docs/connections.md, "MCP 2026-07-28"). */
export const STATELESS_PROTOCOL_VERSION = PROTOCOL_2026;
// The wire's names and the header encoding are shared with the demo server and the API.
export { TASKS_EXTENSION, encodeHeaderValue };

const META_VERSION = META_PROTOCOL_VERSION;
const META_CAPABILITIES = META_CLIENT_CAPABILITIES;

/**
 * A hand-rolled MCP 2026-07-28 client over HTTP POST: every request is self-describing (the
 * `_meta` envelope with the version, client info and the tasks capability, plus the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers), so there is no session to keep.
 * Failures map to the connection layer's typed errors with the same `maybeSent` rules, every
 * request has a deadline, and fetch goes through the signal-isolating wrapper, which also bounds
 * each answer (`maxMessageBytes`).
 */
export class StatelessHttpClient implements StatelessSession {
  readonly server: string;
  private nextId = 1;
  private readonly fetch: FetchLike;

  constructor(
    private readonly config: ServerConfig,
    private readonly logger: UpstreamLogger,
    base?: FetchLike,
    private readonly onCallDuration?: (method: string, seconds: number) => void,
    /** A request was refused the way a server that stopped speaking 2026-07-28 refuses it. */
    private readonly onRefused?: (method: string, error: unknown) => void,
  ) {
    this.server = config.name;
    this.fetch = signalIsolatingFetch(base, undefined, config.maxMessageBytes);
  }

  /**
   * One JSON-RPC request; resolves with its `result` object.
   * @param name the `Mcp-Name` header: the tool name of `tools/call`, the task ID of `tasks/*`.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: StatelessRequestOptions,
  ): Promise<Record<string, unknown>> {
    const timeoutMs = options.timeoutMs ?? this.config.callTimeoutMs;
    const id = this.nextId++;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: withTraceMeta({
        ...params,
        _meta: { ...metaOf(params), ...envelope(options.withoutTasks !== true) },
      }),
    });
    const headers: Record<string, string> = {
      ...this.config.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': STATELESS_PROTOCOL_VERSION,
      'mcp-method': method,
    };
    if (options.name !== undefined) headers['mcp-name'] = encodeHeaderValue(options.name);
    if (options.signal?.aborted) throw abortedStepError(this.server, options.signal, false, method);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('deadline')), timeoutMs);
    const onCallerAbort = () => deadline.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const started = Date.now();
    try {
      let response: Response;
      try {
        response = await this.fetch(this.config.url ?? '', {
          method: 'POST',
          headers,
          body,
          signal: deadline.signal,
        });
      } catch (error) {
        throw this.sendFailure(error, deadline.signal, timeoutMs, options, true);
      }
      let message: unknown;
      try {
        message = await answered(response, id);
      } catch (error) {
        throw this.sendFailure(error, deadline.signal, timeoutMs, options, false);
      }
      try {
        return this.answer(response, message, id);
      } catch (error) {
        if (method !== 'server/discover' && refusesStateless(error))
          this.onRefused?.(method, error);
        throw error;
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
      this.onCallDuration?.(method, (Date.now() - started) / 1000);
    }
  }

  /** The caller's abort wins; else our deadline; else a transport failure, sent unless proven. */
  private sendFailure(
    error: unknown,
    deadline: AbortSignal,
    timeoutMs: number,
    options: RequestOptions,
    beforeAnswer: boolean,
  ): unknown {
    // A request cut while its POST was open may have been processed.
    if (options.signal?.aborted)
      return abortedStepError(this.server, options.signal, true, 'request');
    if (deadline.aborted) return new UpstreamTimeoutError(this.server, timeoutMs);
    const maybeSent = !(beforeAnswer && provablyNotSent(error));
    return new UpstreamConnectionError(this.server, describe(error), maybeSent, { cause: error });
  }

  private answer(response: Response, message: unknown, id: number): Record<string, unknown> {
    const html = (response.headers.get('content-type') ?? '').includes('text/html');
    if (isRecord(message) && isRecord(message.error)) {
      const { code, message: why } = message.error;
      if (typeof code === 'number') {
        throw new UpstreamRpcError(this.server, code, typeof why === 'string' ? why : '');
      }
    }
    if (!response.ok) {
      // An HTTP refusal without a JSON-RPC error: a 4xx was not processed, a 5xx may have been.
      // Whatever its body: a proxy or a load balancer in front of the server answers its 502,
      // 503 or 429 with a web page, and that is the server being unavailable, not an answer
      // that breaks the protocol (docs/connections.md, "MCP 2026-07-28").
      const status = response.status;
      this.logger.debug({ server: this.server, status }, 'upstream HTTP error');
      throw new UpstreamHttpError(
        this.server,
        status,
        retryAfterMs(response.headers.get('retry-after')),
      );
    }
    if (html) {
      // A web page answered with success: not an MCP endpoint, classified permanent at connect
      // (failure.classifier.ts).
      throw new UpstreamProtocolError(this.server, 'the answer is text/html, not JSON-RPC');
    }
    if (!isRecord(message) || message.id !== id || !isRecord(message.result)) {
      throw new UpstreamProtocolError(
        this.server,
        'the answer is not a JSON-RPC response with a result object for the request',
      );
    }
    return message.result;
  }
}

/**
 * What the gateway can do for a server (docs/connections.md, "MCP 2026-07-28"): the tasks
 * extension, and questions in form mode, which a consumer answers through the API, the console or
 * `/mcp` (docs/contracts.md, "Questions: input_required"). Other kinds of question are relayed when
 * a server asks them anyway, but not declared: a consumer may be a person with no model to sample.
 */
const CLIENT_CAPABILITIES = Object.freeze({
  elicitation: { form: {} },
  extensions: { [TASKS_EXTENSION]: {} },
});
/** The same without the tasks extension: the server answers a call, and never makes a task. */
const WITHOUT_TASKS = Object.freeze({ elicitation: { form: {} } });

/** The `_meta` every 2026-07-28 request carries: version, client info, capabilities. */
export function envelope(tasks = true): Record<string, unknown> {
  return {
    [META_VERSION]: STATELESS_PROTOCOL_VERSION,
    [META_CLIENT_INFO]: { name: 'mcp-task-gateway', version: GATEWAY_VERSION },
    [META_CAPABILITIES]: tasks ? CLIENT_CAPABILITIES : WITHOUT_TASKS,
  };
}

function metaOf(params: Record<string, unknown>): Record<string, unknown> {
  return isRecord(params._meta) ? params._meta : {};
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The JSON-RPC message an answer carries: its JSON body, or from an SSE answer the response with
 * our id, read event by event as they stream in (notifications are skipped). Undefined for a web
 * page or what does not parse.
 */
async function answered(response: Response, id: number): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || !response.body) {
    const text = await response.text();
    return type.includes('text/html') ? undefined : parse(text);
  }
  return responseEvent(response.body, id);
}

/**
 * The response with our id among an SSE stream's events. Only the event being read is held
 * (each bounded by `maxMessageBytes`, docs/connections.md, "Message size"), and once the
 * response is there the request is answered without waiting for the stream's end: a server that
 * keeps the stream open after it (or a proxy that holds it) does not hold the request until its
 * deadline. The rest is read in the background for a moment, so that the connection is kept when
 * the server ends the stream just after, and let go of otherwise.
 */
async function responseEvent(body: ReadableStream<Uint8Array>, id: number): Promise<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  // Where an event ends: a blank line (line breaks of LF or CRLF).
  const eventEnd = /\r?\n\r?\n/g;
  let pending = '';
  let done = false;
  try {
    for (;;) {
      const chunk = await reader.read();
      done = chunk.done;
      // Where to look for the event's end again: a blank line may straddle two chunks.
      eventEnd.lastIndex = Math.max(0, pending.length - 3);
      pending += done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      for (let end = eventEnd.exec(pending); end; end = eventEnd.exec(pending)) {
        const message = eventMessage(pending.slice(0, end.index));
        if (isRecord(message) && message.id === id) return message;
        pending = pending.slice(end.index + end[0].length);
        eventEnd.lastIndex = 0;
      }
      if (done) {
        // The last event, if the stream ended without its blank line.
        const message = eventMessage(pending);
        return isRecord(message) && message.id === id ? message : undefined;
      }
    }
  } catch (error) {
    done = true; // a failed stream is done with
    throw error;
  } finally {
    if (!done) drainThenRelease(reader);
  }
}

/** How long the rest of an answered SSE stream is read before it is let go of. */
const DRAIN_AFTER_RESPONSE_MS = 1_000;

/** Reads what is left of a stream to its end, or cancels it after DRAIN_AFTER_RESPONSE_MS. */
function drainThenRelease(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  const timer = setTimeout(
    () => void reader.cancel().catch(() => undefined),
    DRAIN_AFTER_RESPONSE_MS,
  );
  timer.unref();
  void (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // A stream that breaks after its response: the request has its answer already.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** The JSON-RPC message of one SSE event: its `data:` lines joined, parsed. */
function eventMessage(block: string): unknown {
  const data = block
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
  return data === '' ? undefined : parse(data);
}
