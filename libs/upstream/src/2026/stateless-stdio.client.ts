import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import { describe } from '../failure.classifier';
import { StdioNotConnectedError } from '../transport/process-group-stdio.transport';
import type { TransportFactory } from '../transport/transport.factory';
import {
  UpstreamConnectionError,
  UpstreamTimeoutError,
  abortedStepError,
} from '../upstream.errors';
import type { UpstreamLogger } from '../upstream.hooks';
import type {
  StatelessRequestOptions,
  StatelessSession,
  TaskListen,
  TaskListenHandlers,
} from '../upstream.port';
import { envelopedParams, progressOf } from './envelope';
import { noteRefusal, resultOf, throwIfRpcError } from './rpc-answer';
import { StdioTaskListen, subscriptionOf } from './stdio-task-listen';

/** A request sent and not yet answered. */
interface InFlight {
  answered(message: Record<string, unknown>): void;
  failed(error: Error): void;
  progress?: (message: Record<string, unknown>) => void;
}

/**
 * MCP 2026-07-28 over stdio (docs/connections.md, "MCP 2026-07-28 over stdio"): the requests
 * StatelessHttpClient sends, each with its own envelope, as JSON-RPC lines to one child process,
 * with no `initialize`. The child starts with the first request, and again with the first request
 * after it exited. Every request has a deadline; one the deadline or the caller ends is cancelled
 * (`notifications/cancelled`); one in flight when the child exits fails as maybe processed. A
 * push subscription (`listenTasks`) lives in the child too, and ends when it exits.
 */
export class StatelessStdioClient implements StatelessSession {
  readonly server: string;
  private nextId = 1;
  private child?: Promise<Transport>;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly listens = new Map<number, StdioTaskListen>();
  private closed = false;

  constructor(
    private readonly config: ServerConfig,
    private readonly factory: TransportFactory,
    private readonly logger: UpstreamLogger,
    private readonly onCallDuration?: (method: string, seconds: number) => void,
    /** A request was refused the way a server that stopped speaking 2026-07-28 refuses it. */
    private readonly onRefused?: (method: string, error: unknown) => void,
  ) {
    this.server = config.name;
  }

  async request(
    method: string,
    params: Record<string, unknown>,
    options: StatelessRequestOptions,
  ): Promise<Record<string, unknown>> {
    const timeoutMs = options.timeoutMs ?? this.config.callTimeoutMs;
    if (options.signal?.aborted) throw abortedStepError(this.server, options.signal, false, method);
    const id = this.nextId++;
    const message = { jsonrpc: '2.0', id, method, params: envelopedParams(params, options, id) };
    const started = Date.now();
    try {
      const child = await this.running();
      const reply = await this.exchange(child, id, message as JSONRPCMessage, timeoutMs, options);
      try {
        throwIfRpcError(this.server, reply);
        return resultOf(this.server, reply, id);
      } catch (error) {
        throw noteRefusal(method, error, this.onRefused);
      }
    } finally {
      this.onCallDuration?.(method, (Date.now() - started) / 1000);
    }
  }

  /**
   * Opens `subscriptions/listen` for these remote task IDs (docs/connections.md, "Push"), on the
   * running child or one started for it; a refusal or its end is reported through `onEnd`.
   */
  listenTasks(taskIds: readonly string[], handlers: TaskListenHandlers): TaskListen {
    const id = this.nextId++;
    const { connectTimeoutMs } = this.config;
    const listen = new StdioTaskListen(id, connectTimeoutMs, handlers, () =>
      this.listens.delete(id),
    );
    this.listens.set(id, listen);
    this.running().then(
      (child) => listen.send(child, taskIds),
      (error: unknown) => listen.lost(describe(error)),
    );
    return listen;
  }

  /** Ends the child, failing what is in flight; the next request starts another. */
  async release(): Promise<void> {
    const child = await this.child?.catch(() => undefined);
    await child?.close();
  }

  /** Ends the child for good. */
  close(): Promise<void> {
    this.closed = true;
    return this.release();
  }

  /** The running child, started when there is none. A start that fails sent nothing. */
  private running(): Promise<Transport> {
    if (this.closed) {
      const error = new UpstreamConnectionError(this.server, 'the client is closed', false);
      return Promise.reject(error);
    }
    this.child ??= this.start();
    return this.child;
  }

  private async start(): Promise<Transport> {
    const transport = this.factory.create(this.config);
    transport.onmessage = (message) => this.receive(transport, message);
    transport.onerror = (error) =>
      this.logger.debug({ server: this.server, error: describe(error) }, 'upstream stdio error');
    transport.onclose = () => this.exited();
    try {
      await transport.start();
      return transport;
    } catch (error) {
      this.child = undefined;
      throw new UpstreamConnectionError(this.server, describe(error), false, { cause: error });
    }
  }

  /** The child exited: what it was asked may have been done; the next request starts another. */
  private exited(): void {
    this.child = undefined;
    const inFlight = [...this.inFlight.values()];
    this.inFlight.clear();
    const why = this.closed ? 'the client closed' : 'the stdio server exited';
    for (const request of inFlight) {
      request.failed(new UpstreamConnectionError(this.server, why, true));
    }
    for (const listen of [...this.listens.values()]) listen.lost(why);
  }

  private exchange(
    child: Transport,
    id: number,
    message: JSONRPCMessage,
    timeoutMs: number,
    options: StatelessRequestOptions,
  ): Promise<Record<string, unknown>> {
    const { signal } = options;
    return new Promise((resolve, reject) => {
      const settle = (done: () => void) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.inFlight.delete(id);
        done();
      };
      const cancel = (reason: string) => {
        const notice = { jsonrpc: '2.0', method: 'notifications/cancelled' };
        child
          .send({ ...notice, params: { requestId: id, reason } } as JSONRPCMessage)
          .catch(() => undefined);
      };
      const timer = setTimeout(() => {
        cancel('timed out');
        settle(() => reject(new UpstreamTimeoutError(this.server, timeoutMs)));
      }, timeoutMs);
      const onAbort = () => {
        cancel('cancelled by the client');
        // The poller's own abort reason passes through as given, as the HTTP client's does.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        settle(() => reject(abortedStepError(this.server, signal!, true, 'request')));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.inFlight.set(id, {
        answered: (reply) => settle(() => resolve(reply)),
        failed: (error) => settle(() => reject(error)),
        progress: progressOf(id, options.onProgress),
      });
      child.send(message).catch((error: unknown) => {
        // Nothing was written when the child was already gone.
        const maybeSent = !(error instanceof StdioNotConnectedError);
        const failure = new UpstreamConnectionError(this.server, describe(error), maybeSent, {
          cause: error,
        });
        settle(() => reject(failure));
      });
    });
  }

  /** One line from the child: an answer, a notification of a request, or a request of its own. */
  private receive(child: Transport, line: JSONRPCMessage): void {
    const message: Record<string, unknown> = line;
    const { id, method } = message;
    if (typeof method === 'string') {
      if (id === undefined) {
        const subscription = subscriptionOf(message);
        const listen =
          typeof subscription === 'number' ? this.listens.get(subscription) : undefined;
        if (listen) return listen.notified(message);
        for (const request of this.inFlight.values()) request.progress?.(message);
        return;
      }
      // 2026-07-28 asks its questions in results, never by a request to the client.
      const error = { code: -32601, message: `method not found: ${method}` };
      void child.send({ jsonrpc: '2.0', id, error } as JSONRPCMessage).catch(() => undefined);
      return;
    }
    if (typeof id !== 'number') return;
    const listen = this.listens.get(id);
    if (listen) listen.answered(message);
    else this.inFlight.get(id)?.answered(message);
  }
}
