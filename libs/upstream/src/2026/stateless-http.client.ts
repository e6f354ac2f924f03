import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerConfig } from '@app/config';
import { encodeHeaderValue } from '@app/wire';
import { describe, provablyNotSent } from '../failure.classifier';
import { retryAfterMs } from '../transport/retry-after';
import { signalIsolatingFetch } from '../transport/signal-isolating.fetch';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamProtocolError,
  UpstreamTimeoutError,
  abortedStepError,
} from '../upstream.errors';
import type { UpstreamLogger } from '../upstream.hooks';
import { STATELESS_PROTOCOL_VERSION, envelopedParams, progressOf } from './envelope';
import { noteRefusal, resultOf, throwIfRpcError } from './rpc-answer';
import { answered } from './sse-answer.reader';
import { TaskListenStream } from './task-listen.stream';
import type {
  RequestOptions,
  StatelessRequestOptions,
  StatelessSession,
  TaskListen,
  TaskListenHandlers,
} from '../upstream.port';

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

  /** `subscriptions/listen`: one POST whose answer is the subscription's SSE stream. */
  listenTasks(taskIds: readonly string[], handlers: TaskListenHandlers): TaskListen {
    const stream = new TaskListenStream(this.config, taskIds, handlers);
    stream.start();
    return stream;
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
      params: envelopedParams(params, options, id),
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
        message = await answered(response, id, progressOf(id, options.onProgress));
      } catch (error) {
        throw this.sendFailure(error, deadline.signal, timeoutMs, options, false);
      }
      try {
        return this.answer(response, message, id);
      } catch (error) {
        throw noteRefusal(method, error, this.onRefused);
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCallerAbort);
      this.onCallDuration?.(method, (Date.now() - started) / 1000);
    }
  }

  /** Nothing to end: the connections are the shared HTTP agent's. */
  close(): Promise<void> {
    return Promise.resolve();
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
    throwIfRpcError(this.server, message);
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
    return resultOf(this.server, message, id);
  }
}
