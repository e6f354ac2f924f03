import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ResultSchema,
  TaskStatusNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { GATEWAY_VERSION } from '@app/common';
import type { ServerConfig } from '@app/config';
import { withTraceMeta } from '@app/tracing';
import { ProcessGroupStdioTransport } from '../transport/process-group-stdio.transport';
import { mapRequestError } from './request-error.mapper';
import type { TransportFactory } from '../transport/transport.factory';
import type { RequestId } from '../transport/signal-isolating.fetch';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamRequestBrokenError,
  abortedStepError,
} from '../upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks } from '../upstream.hooks';
import type { RequestOptions } from '../upstream.port';
import { withDeadline } from './with-deadline';

export interface ConnectionOptions {
  config: ServerConfig;
  factory: TransportFactory;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  closeTimeoutMs: number;
  /** Reattach to this Streamable HTTP session instead of initializing a new one. */
  resume?: { sessionId: string; protocolVersion: string };
  /** Unexpected end of the transport (child exit, closed stream). Not called after close(). */
  onLost?: (reason: string) => void;
  /**
   * One request's answer broke off, or was an HTTP error status other than 429 (HTTP); only that
   * request failed. The owner may check the session's health, and tear it down only if that
   * check fails.
   */
  onRequestBroken?: (reason: string) => void;
  onToolsListChanged?: () => void;
  /**
   * Push on a 2025-11-25 session (docs/connections.md, "Push"): each `notifications/tasks/status`
   * the server sends, and the end of the server's GET stream that carries them (the SDK does not
   * reopen it: `reconnectionOptions.maxRetries` is 0). Not called after close().
   */
  push?: {
    onTaskStatus(taskId: string): void;
    onStreamEnded(reason: string): void;
  };
}

/** The SDK's words, through `onerror`, for a GET stream that ended or could not be opened. */
const SERVER_STREAM_ENDED =
  /Maximum reconnection attempts|Failed to open SSE stream|SSE stream disconnected/;

interface InFlight {
  fail(error: Error): void;
  /** The JSON-RPC ID the SDK gave this request: tells which request a broken stream carried. */
  rpcId?: RequestId;
  /** Stops the SDK waiting for an answer that can no longer come. */
  abandon(): void;
}

type Params = Record<string, unknown>;

/**
 * One Client and one transport: a single connect attempt and the session it produced. Never
 * reused after close (connections.md requirement 2: a new pair per attempt). Over 300 lines on
 * purpose: the calls in flight, the transport's close and a broken stream are one state that
 * every path here reads and ends together.
 */
export class UpstreamConnection {
  readonly server: string;
  private readonly client: Client;
  private transport?: Transport;
  private readonly inFlight = new Set<InFlight>();
  private closedReason?: string;
  /** Set by {@link retire}: no new requests; closes once the last one in flight settles. */
  private retiredReason?: string;
  private transportClosed = false;
  private closing?: Promise<void>;
  private pushGone = false;
  /** The request being handed to the SDK right now: its outgoing message names its JSON-RPC ID. */
  private sending?: InFlight;
  /** Last time a request started or ended: keepalive pings only an idle session. */
  lastActivity = Date.now();

  constructor(private readonly options: ConnectionOptions) {
    this.server = options.config.name;
    this.client = new Client(
      { name: 'mcp-task-gateway', version: GATEWAY_VERSION },
      { capabilities: {} },
    );
    this.client.onclose = () => this.handleTransportClosed();
    this.client.onerror = (error) => {
      options.logger.debug({ server: this.server, err: error.message }, 'upstream transport error');
      if (SERVER_STREAM_ENDED.test(error.message)) this.pushEnded(error.message);
    };
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () =>
      options.onToolsListChanged?.(),
    );
    const push = options.push;
    if (push) {
      this.client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
        if (this.closedReason === undefined) push.onTaskStatus(note.params.taskId);
      });
    }
  }

  get sessionId(): string | undefined {
    return this.transport?.sessionId;
  }

  get protocolVersion(): string | undefined {
    const transport = this.transport as { protocolVersion?: string } | undefined;
    return transport?.protocolVersion ?? this.options.resume?.protocolVersion;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.client.getServerCapabilities();
  }

  get pendingRequests(): number {
    return this.inFlight.size;
  }

  /** Usable for new requests: not closed or retired and, for stdio, the child still runs. */
  get alive(): boolean {
    if (this.closedReason !== undefined || this.retiredReason !== undefined) return false;
    if (this.transportClosed) return false;
    return !(this.transport instanceof ProcessGroupStdioTransport) || this.transport.alive;
  }

  /** Spawn or open, then initialize, all within connectTimeoutMs; a late attempt is torn down. */
  async connect(): Promise<void> {
    const { config, resume } = this.options;
    const timeoutMs = config.connectTimeoutMs;
    const deadline = new AbortController();
    try {
      this.transport = this.options.factory.create(config, resume?.sessionId, (error, ids) =>
        this.handleStreamBroken(error, ids),
      );
      this.noteRequestIds(this.transport);
      const connecting = this.client.connect(this.transport, {
        timeout: timeoutMs,
        signal: deadline.signal,
      });
      await withDeadline(connecting, timeoutMs, () => {
        deadline.abort();
        return new Error(`connect and initialize did not finish within ${timeoutMs} ms`);
      });
      // No initialize on a resumed session: the HTTP header must still carry the version.
      if (resume) this.transport.setProtocolVersion?.(resume.protocolVersion);
    } catch (error) {
      await this.close('connect failed', false);
      throw error;
    }
  }

  callTool(name: string, args: Params, options: RequestOptions): Promise<CallToolResult> {
    // The low-level request, not client.callTool: no output-schema checks or task guards that
    // would turn an upstream's quirk into a misleading local error.
    return this.send('tools/call', { name, arguments: args }, options, CallToolResultSchema);
  }

  request(method: string, params: Params, options: RequestOptions): Promise<unknown> {
    return this.send(method, params, options, ResultSchema);
  }

  private async send<S extends typeof ResultSchema>(
    method: string,
    params: Params,
    options: RequestOptions,
    schema: S,
  ): Promise<S['_output']> {
    const timeoutMs = options.timeoutMs ?? this.options.config.callTimeoutMs;
    const context = () => ({
      server: this.server,
      timeoutMs,
      hadSession: this.sessionId !== undefined,
      transportClosed: this.transportClosed,
      http: this.options.config.transport !== 'stdio',
    });
    if (options.signal?.aborted) throw abortedStepError(this.server, options.signal, false, method);
    if (!this.alive) {
      throw new UpstreamConnectionError(
        this.server,
        `not connected (${this.closedReason ?? this.retiredReason ?? 'transport closed'})`,
        false,
      );
    }
    const controller = new AbortController();
    const onCallerAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const started = Date.now();
    this.lastActivity = started;
    let entry: InFlight | undefined;
    try {
      return await new Promise<S['_output']>((resolve, reject) => {
        const own: InFlight = {
          fail: reject,
          abandon: () => controller.abort(new Error('the answer stream broke')),
        };
        entry = own;
        this.inFlight.add(own);
        // The SDK writes the request to the transport synchronously inside request(): the
        // wrapped send below reads its JSON-RPC ID off the message while this is set.
        this.sending = own;
        try {
          this.client
            // The attempt's trace context rides in _meta (a no-op when tracing is off).
            .request({ method, params: withTraceMeta(params) }, schema, {
              // Always explicit: the SDK's silent default is 60 s (requirement 3).
              timeout: timeoutMs,
              resetTimeoutOnProgress: false,
              signal: controller.signal,
              onprogress: options.onProgress,
            })
            .then(resolve, reject);
        } finally {
          this.sending = undefined;
        }
      });
    } catch (error) {
      if (options.signal?.aborted)
        throw abortedStepError(this.server, options.signal, true, method);
      const failure = mapRequestError(error, context());
      // An error status answers this exchange, not the session: its owner checks the session
      // (requirement 6), except after a 429, where the server asked for fewer requests.
      // A retired session needs no check: it is already replaced.
      if (failure instanceof UpstreamHttpError && failure.status !== 429 && !this.retiredReason) {
        this.options.onRequestBroken?.(`HTTP ${failure.status} to a request`);
      }
      throw failure;
    } finally {
      if (entry) this.inFlight.delete(entry);
      options.signal?.removeEventListener('abort', onCallerAbort);
      this.lastActivity = Date.now();
      this.options.metrics.onCallDuration?.(this.server, method, (Date.now() - started) / 1000);
      if (this.retiredReason !== undefined && this.inFlight.size === 0) {
        void this.close(this.retiredReason, false);
      }
    }
  }

  /**
   * The session ended on the server's word (HTTP 404: it no longer knows the session;
   * requirement 7): no new request goes on this connection, and the requests in flight on it
   * are not failed here, as {@link close} would fail them, as possibly sent. Each gets its own
   * answer instead: a 404 too when the server forgot the session before it arrived (not sent,
   * so a submit is tried again), or its result or broken stream when it was already being
   * answered. The connection closes, without DELETE, once the last of them settles; each is
   * bounded by its own deadline.
   */
  retire(reason: string): void {
    if (this.closing || this.retiredReason !== undefined) return;
    this.retiredReason = reason;
    this.pushEnded(`the session ended (${reason})`);
    if (this.inFlight.size === 0) void this.close(reason, false);
  }

  /** Closed, or closing: {@link close} was called (directly or by a retired connection). */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /**
   * Deliberate teardown: fails in-flight requests at once (requirement 6), then closes within a
   * bound. `terminate` sends the session DELETE: only for sessions no native task is bound to.
   */
  close(reason: string, terminate: boolean): Promise<void> {
    if (this.closing) return this.closing;
    this.pushEnded(`the session closed (${reason})`);
    this.closedReason = reason;
    for (const entry of this.inFlight) {
      entry.fail(new UpstreamConnectionError(this.server, `connection closed (${reason})`, true));
    }
    this.inFlight.clear();
    this.closing = this.teardown(terminate);
    return this.closing;
  }

  private async teardown(terminate: boolean): Promise<void> {
    const transport = this.transport;
    const bound = this.options.closeTimeoutMs;
    if (terminate && !this.transportClosed && transport instanceof StreamableHTTPClientTransport) {
      await withDeadline(transport.terminateSession(), bound, () => new Error('DELETE')).catch(
        () => undefined, // Best effort: the server expires the session on its own.
      );
    }
    // stdio needs its own bound: stdin close, 2 s, SIGTERM, 2 s, SIGKILL (requirement 9).
    const closeBound = transport instanceof ProcessGroupStdioTransport ? bound + 5000 : bound;
    await withDeadline(this.client.close(), closeBound, () => new Error('close')).catch(
      () => undefined,
    );
  }

  /** Wraps the transport's send to learn the JSON-RPC ID of each request this connection sends. */
  private noteRequestIds(transport: Transport): void {
    const send = transport.send.bind(transport);
    transport.send = (message, sendOptions) => {
      const entry = this.sending;
      if (entry && 'method' in message && 'id' in message) {
        entry.rpcId = message.id;
        this.sending = undefined;
      }
      return send(message, sendOptions);
    };
  }

  /**
   * An HTTP answer stream broke mid-request (the server died, the network failed, a proxy cut
   * it). The SDK would leave the request waiting for its timeout (hours, for a held sync-call),
   * so the requests that POST carried fail at once as possibly sent. Only those: on Streamable
   * HTTP each request is its own exchange, and one broken answer says nothing about the others
   * (requirement 6). The owner checks the session's health; a dead server fails that check and
   * only then is the session torn down. A stream whose requests cannot be told is treated as
   * the session's.
   */
  private handleStreamBroken(error: unknown, requestIds: RequestId[]): void {
    if (this.closedReason !== undefined) return;
    const detail = error instanceof Error ? error.message : String(error);
    if (requestIds.length === 0) {
      this.options.onLost?.(`an HTTP response stream broke (${detail})`);
      return;
    }
    const hit = [...this.inFlight].filter(
      (entry) => entry.rpcId !== undefined && requestIds.includes(entry.rpcId),
    );
    if (hit.length === 0) return;
    for (const entry of hit) {
      this.inFlight.delete(entry);
      entry.fail(new UpstreamRequestBrokenError(this.server, detail, { cause: error }));
      entry.abandon();
    }
    // A retired session needs no check: it is already replaced.
    if (this.retiredReason === undefined) {
      this.options.onRequestBroken?.(`an HTTP response stream broke (${detail})`);
    }
  }

  /** The server stream that carries pushed task statuses is gone; told once. */
  private pushEnded(reason: string): void {
    const push = this.options.push;
    if (!push || this.closedReason !== undefined || this.pushGone) return;
    this.pushGone = true;
    push.onStreamEnded(reason);
  }

  private handleTransportClosed(): void {
    this.pushEnded('the transport closed');
    this.transportClosed = true;
    if (this.closedReason !== undefined || this.retiredReason !== undefined) return;
    const reason =
      this.transport instanceof ProcessGroupStdioTransport
        ? 'the stdio server exited'
        : 'the transport closed';
    this.options.onLost?.(reason);
  }
}
