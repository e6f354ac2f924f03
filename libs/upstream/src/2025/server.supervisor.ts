import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import type { BackoffPolicy } from '../backoff.policy';
import { classifyConnectFailure, describe, type FailureClass } from '../failure.classifier';
import { KeepaliveMonitor } from './keepalive.monitor';
import { readToolCatalog } from '../tool-catalog.reader';
import type { TransportFactory } from '../transport/transport.factory';
import { UpstreamConnection, type ConnectionOptions } from './upstream.connection';
import { checkSessionAfterBreak, pingSession } from './session-health.check';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamRequestBrokenError,
  UpstreamSessionExpiredError,
  UpstreamUnavailableError,
} from '../upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks } from '../upstream.hooks';
import { SupervisorLifecycle } from '../supervisor.lifecycle';
import { pushSessionKey, type ServerStatus, type SessionPushEvent } from '../upstream.port';

export interface SupervisorDeps {
  config: ServerConfig;
  factory: TransportFactory;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  backoff: BackoffPolicy;
  closeTimeoutMs: number;
  onToolsChanged(status: ServerStatus): void;
  /** A connect attempt failed (the pool may ask whether the server now speaks 2026-07-28). */
  onConnectFailed?(failure: FailureClass, error: unknown): void;
  /** What the task session's stream pushed, or that it ended (its GET stream, or the stdio pipe). */
  onTaskPush?(event: SessionPushEvent): void;
}

/**
 * The 2025-11-25 side of one server (connections.md requirements 1–4, 10–14): connect with a
 * deadline, retry with backoff, park after the budget, probe while parked, reconnect on loss,
 * keep an idle HTTP session alive, and keep the tool catalog. It never gives up for good; it is
 * put to rest only when its server is found to speak 2026-07-28 alone ("Which side serves").
 * Over 300 lines on purpose: its two connections (the pooled one and the task session) share
 * one lifecycle and one parked state, and split apart each would need the other's.
 */
export class ServerSupervisor {
  readonly server: string;
  readonly config: ServerConfig;
  private readonly life: SupervisorLifecycle;
  private tools?: Tool[];
  private capabilities?: ServerCapabilities;
  private current?: UpstreamConnection;
  private attemptConnection?: UpstreamConnection;
  private readonly keepalive: KeepaliveMonitor;
  private taskConnection?: UpstreamConnection;
  private taskConnecting?: Promise<UpstreamConnection>;
  /** Sessions the server forgot, still waiting for the requests in flight on them to settle. */
  private readonly retired = new Set<UpstreamConnection>();

  constructor(private readonly deps: SupervisorDeps) {
    this.server = deps.config.name;
    this.config = deps.config;
    this.life = new SupervisorLifecycle({
      config: deps.config,
      logger: deps.logger,
      metrics: deps.metrics,
      backoff: deps.backoff,
      side: 'session',
      attemptOnce: () => this.attemptOnce(),
    });
    this.keepalive = new KeepaliveMonitor(deps.config, deps.logger, (conn, reason) =>
      this.lose(conn, reason, 'keepalive_failed'),
    );
  }

  /** Whether the side runs (started and not put to rest). */
  get started(): boolean {
    return this.life.started;
  }

  get state(): ServerStatus['state'] {
    return this.life.state;
  }

  start(): void {
    this.life.start();
  }

  status(): ServerStatus {
    const state = this.life.state;
    return {
      server: this.server,
      state,
      reason: state === 'ready' ? undefined : this.life.reason,
      tools: this.tools,
      capabilities: this.capabilities,
    };
  }

  /** The live pooled connection now, without waiting; a dead stdio child fails at once. */
  currentOrThrow(): UpstreamConnection {
    const conn = this.current;
    if (conn?.alive && this.life.state === 'ready') return conn;
    if (conn) this.lose(conn, 'the stdio server exited', 'connection_lost');
    throw new UpstreamUnavailableError(
      this.server,
      this.life.state,
      this.life.reason ?? 'not connected',
    );
  }

  get currentConnection(): UpstreamConnection | undefined {
    return this.current;
  }

  /**
   * Waits (at most connectTimeoutMs) for a ready pooled connection. New work revives a parked
   * server with an immediate probe (requirement 1), and starts a side put to rest.
   */
  async ready(): Promise<UpstreamConnection> {
    this.start();
    if (this.current && !this.current.alive) {
      this.lose(this.current, 'the stdio server exited', 'connection_lost');
    }
    this.life.probeForWork();
    await this.life.waitUntil(
      () =>
        (this.life.state === 'ready' && this.current !== undefined) ||
        this.life.state === 'closed' ||
        (this.life.state === 'parked' && !this.life.attempting),
      this.deps.config.connectTimeoutMs,
    );
    if (this.life.state === 'ready' && this.current) return this.current;
    throw new UpstreamUnavailableError(
      this.server,
      this.life.state,
      this.life.reason ?? 'not connected',
    );
  }

  /**
   * Called by sessions when a request failed: a lost session or transport means reconnect. One
   * request's broken answer or HTTP error status does not (requirement 6): a ping checks the
   * session (the connection asks for it after an error status), and only its failure ends it,
   * with the requests in flight on it.
   */
  reportFailure(conn: UpstreamConnection, error: unknown): void {
    if (error instanceof UpstreamSessionExpiredError) {
      // Retired, not closed: the other requests in flight get their own answers (requirement 7).
      this.lose(conn, 'the server forgot the session (HTTP 404)', 'session_expired', true);
    } else if (error instanceof UpstreamRequestBrokenError) {
      checkSessionAfterBreak(conn, this.config, (reason) =>
        this.lose(conn, reason, 'connection_lost'),
      );
    } else if (error instanceof UpstreamConnectionError && !(error instanceof UpstreamHttpError)) {
      this.lose(conn, error.message, 'connection_lost');
    }
  }

  /**
   * The connection native tasks are created on. Over HTTP a separate session that is never
   * ended with DELETE (tasks are bound to it); over stdio the child's one session.
   */
  async taskConnectionReady(): Promise<UpstreamConnection> {
    const pooled = await this.ready();
    if (this.deps.config.transport === 'stdio') return pooled;
    if (this.taskConnection?.alive) return this.taskConnection;
    this.taskConnecting ??= this.openTaskConnection().finally(() => {
      this.taskConnecting = undefined;
    });
    return this.taskConnecting;
  }

  /**
   * Drops a broken task connection (without DELETE: the tasks bound to it may live on). After
   * `error`, a 404 that says the server forgot the session, it is retired instead of closed: the
   * other requests in flight on it get their own answers (requirement 7).
   */
  dropTaskConnection(conn: UpstreamConnection, error?: unknown): void {
    if (this.taskConnection !== conn) return;
    this.taskConnection = undefined;
    if (error instanceof UpstreamSessionExpiredError) {
      this.retire(conn, 'the server forgot the task session (HTTP 404)');
    } else {
      void conn.close('task session lost', false);
    }
  }

  /**
   * A new pooled session: does the task session opened before it still hold? A server that
   * forgot one session (a restart) forgot the other, and the task session would otherwise be
   * found stale only by the next submit on it, which then fails "not sent" and waits out a retry
   * (requirement 7). A `ping` answers: its 404 retires the task session, so the next submit opens
   * a new one. A timeout or a lost connection leaves it alone: native tasks bound to a session
   * the server still knows must not lose it, and its own requests tell a dead one. An error
   * status goes to the connection's own check of the session (requirement 6), as on any request.
   */
  private checkTaskSession(): void {
    const conn = this.taskConnection;
    if (!conn?.alive) return;
    void pingSession(conn, this.config).then((failure) => {
      if (failure === undefined) return;
      const forgotten = failure instanceof UpstreamSessionExpiredError;
      this.deps.logger.info(
        { server: this.server, err: describe(failure) },
        forgotten
          ? 'upstream task session forgotten by the server; replaced at the next submit'
          : 'upstream task session check failed; the session is kept',
      );
      if (forgotten) this.dropTaskConnection(conn, failure);
    });
  }

  /** Retires `conn` (UpstreamConnection.retire), kept so that closing the pool closes it too. */
  private retire(conn: UpstreamConnection, reason: string): void {
    for (const old of this.retired) if (old.closed) this.retired.delete(old);
    this.retired.add(conn);
    conn.retire(reason);
  }

  /**
   * Puts the side to rest: its server was found to speak 2026-07-28 only. The pooled session is
   * ended; the task session is closed without DELETE (tasks bound to it are resumed by ID).
   */
  async stop(reason: string): Promise<void> {
    if (!this.life.started) return;
    this.keepalive.stop();
    this.life.stop(reason);
    await this.closeConnections(reason);
  }

  async close(): Promise<void> {
    if (this.life.state === 'closed') return;
    this.keepalive.stop();
    this.life.close();
    await this.closeConnections('pool closed');
    await this.life.settled();
  }

  private async closeConnections(reason: string): Promise<void> {
    const pooled = [this.current, this.attemptConnection];
    const task = this.taskConnection;
    const retired = [...this.retired];
    this.current = undefined;
    this.taskConnection = undefined;
    this.retired.clear();
    await Promise.all([
      ...pooled.map((conn) => conn?.close(reason, true)),
      task?.close(reason, false),
      ...retired.map((conn) => conn.close(reason, false)),
    ]);
  }

  /**
   * The push of a connection native tasks are made on (docs/connections.md, "Push"), reported
   * under its session's key: its ID over HTTP, the server's child over stdio (`pushSessionKey`).
   */
  private pushOf(conn: () => UpstreamConnection): ConnectionOptions['push'] {
    const { server } = this;
    const stdio = this.config.transport === 'stdio';
    const tell = (event: (sessionId: string) => SessionPushEvent): void => {
      const { sessionId } = conn();
      if (sessionId !== undefined || stdio) {
        this.deps.onTaskPush?.(event(pushSessionKey(server, sessionId ?? null)));
      }
    };
    return {
      onTaskStatus: (taskId) =>
        tell((sessionId) => ({ kind: 'status', server, sessionId, taskId })),
      onStreamEnded: (reason) =>
        tell((sessionId) => ({ kind: 'ended', server, sessionId, reason })),
    };
  }

  private async openTaskConnection(): Promise<UpstreamConnection> {
    const conn = this.newConnection(
      (reason) => {
        this.deps.logger.info({ server: this.server, reason }, 'upstream task session lost');
        this.dropTaskConnection(conn);
      },
      this.pushOf(() => conn),
    );
    try {
      await conn.connect();
    } catch (error) {
      throw new UpstreamUnavailableError(this.server, this.life.state, describe(error));
    }
    if (!this.life.started) {
      await conn.close('pool closed', false);
      throw new UpstreamUnavailableError(this.server, this.life.state, 'pool closed');
    }
    this.taskConnection = conn;
    return conn;
  }

  private newConnection(
    onLost: (reason: string) => void,
    push?: ConnectionOptions['push'],
  ): UpstreamConnection {
    const { config, factory, logger, metrics, closeTimeoutMs } = this.deps;
    const conn: UpstreamConnection = new UpstreamConnection({
      config,
      factory,
      logger,
      metrics,
      closeTimeoutMs,
      onLost,
      onRequestBroken: () => checkSessionAfterBreak(conn, config, onLost),
      onToolsListChanged: () => void this.refreshTools(conn),
      push,
    });
    return conn;
  }

  /** One connect: spawn/open + initialize, then tools/list, the request that proves health. */
  private async attemptOnce(): Promise<void> {
    // Over stdio the pooled session is the task session (taskConnectionReady): it pushes.
    const push = this.config.transport === 'stdio' ? this.pushOf(() => conn) : undefined;
    const conn = this.newConnection((reason) => this.lose(conn, reason, 'connection_lost'), push);
    this.attemptConnection = conn;
    try {
      await conn.connect();
      const tools = await readToolCatalog(conn);
      if (!this.life.started) return void (await conn.close('pool closed', true));
      this.current = conn;
      this.tools = tools;
      this.capabilities = conn.capabilities;
      this.life.succeeded(`connected, ${tools.length} tools`);
      this.keepalive.watch(conn);
      this.checkTaskSession();
      this.deps.onToolsChanged(this.status());
    } catch (error) {
      // A pooled session never carries native tasks, so its DELETE is allowed.
      await conn.close('connect failed', true);
      if (this.life.started) {
        const failure = classifyConnectFailure(error);
        this.life.failed(failure);
        this.deps.onConnectFailed?.(failure, error);
      }
    } finally {
      this.attemptConnection = undefined;
    }
  }

  /** The pooled connection broke: reconnect at once the first time, then with backoff. */
  private lose(conn: UpstreamConnection, reason: string, kind: string, retire = false): void {
    if (conn !== this.current || !this.life.started) return;
    this.current = undefined;
    this.keepalive.stop();
    if (retire) this.retire(conn, reason);
    else void conn.close(reason, false);
    this.life.lost(reason, kind);
  }

  private async refreshTools(conn: UpstreamConnection): Promise<void> {
    if (conn !== this.current) return;
    try {
      const tools = await readToolCatalog(conn);
      if (conn !== this.current) return;
      this.tools = tools;
      this.deps.logger.info({ server: this.server, tools: tools.length }, 'upstream tools changed');
      this.deps.onToolsChanged(this.status());
    } catch (error) {
      this.deps.logger.warn(
        { server: this.server, err: describe(error) },
        'upstream tools refresh failed',
      );
    }
  }
}
