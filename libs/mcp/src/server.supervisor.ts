import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig } from '@app/config';
import type { BackoffPolicy } from './backoff.policy';
import { classifyConnectFailure, describe, type FailureClass } from './failure.classifier';
import { KeepaliveMonitor } from './keepalive.monitor';
import { readToolCatalog } from './tool-catalog.reader';
import type { TransportFactory } from './transport.factory';
import { UpstreamConnection } from './upstream.connection';
import { checkSessionAfterBreak } from './session-health.check';
import {
  UpstreamConnectionError,
  UpstreamRequestBrokenError,
  UpstreamSessionExpiredError,
  UpstreamUnavailableError,
} from './upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks } from './upstream.hooks';
import type { ServerStatus, SupervisorState } from './upstream.port';

export interface SupervisorDeps {
  config: ServerConfig;
  factory: TransportFactory;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  backoff: BackoffPolicy;
  closeTimeoutMs: number;
  onToolsChanged(status: ServerStatus): void;
}

/** Work may revive a parked server, but a burst of work must not become a burst of probes. */
const MAX_WORK_PROBE_GAP_MS = 5000;

/**
 * One server's connection life (connections.md requirements 1–4, 10–14): connect with a deadline,
 * retry with backoff, park after the budget, probe while parked, reconnect on loss, keep an idle
 * HTTP session alive, and keep the tool catalog. It never gives up for good.
 */
export class ServerSupervisor {
  readonly server: string;
  readonly config: ServerConfig;
  private state: SupervisorState = 'connecting';
  private reason?: string = 'not started';
  private tools?: Tool[];
  private capabilities?: ServerCapabilities;
  private current?: UpstreamConnection;
  private attemptConnection?: UpstreamConnection;
  private attempt?: Promise<void>;
  private failures = 0;
  private everReady = false;
  private started = false;
  private lastProbeAt = 0;
  private retryTimer?: NodeJS.Timeout;
  private probeTimer?: NodeJS.Timeout;
  private readonly waiters = new Set<() => void>();
  private readonly keepalive: KeepaliveMonitor;
  private taskConnection?: UpstreamConnection;
  private taskConnecting?: Promise<UpstreamConnection>;

  constructor(private readonly deps: SupervisorDeps) {
    this.server = deps.config.name;
    this.config = deps.config;
    this.keepalive = new KeepaliveMonitor(deps.config, deps.logger, (conn, reason) =>
      this.lose(conn, reason, 'keepalive_failed'),
    );
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.transition('connecting', 'starting');
    void this.runAttempt();
  }

  status(): ServerStatus {
    return {
      server: this.server,
      state: this.state,
      reason: this.state === 'ready' ? undefined : this.reason,
      tools: this.tools,
      capabilities: this.capabilities,
    };
  }

  /** The live pooled connection now, without waiting; a dead stdio child fails at once. */
  currentOrThrow(): UpstreamConnection {
    const conn = this.current;
    if (conn?.alive && this.state === 'ready') return conn;
    if (conn) this.lose(conn, 'the stdio server exited', 'connection_lost');
    throw new UpstreamUnavailableError(this.server, this.state, this.reason ?? 'not connected');
  }

  get currentConnection(): UpstreamConnection | undefined {
    return this.current;
  }

  /**
   * Waits (at most connectTimeoutMs) for a ready pooled connection. New work revives a parked
   * server with an immediate probe (requirement 1).
   */
  async ready(): Promise<UpstreamConnection> {
    this.start();
    if (this.current && !this.current.alive) {
      this.lose(this.current, 'the stdio server exited', 'connection_lost');
    }
    if (this.state === 'parked') this.probeForWork();
    await this.waitUntil(
      () =>
        (this.state === 'ready' && this.current !== undefined) ||
        this.state === 'closed' ||
        (this.state === 'parked' && this.attempt === undefined),
      this.deps.config.connectTimeoutMs,
    );
    if (this.state === 'ready' && this.current) return this.current;
    throw new UpstreamUnavailableError(this.server, this.state, this.reason ?? 'not connected');
  }

  /**
   * Called by sessions when a request failed: a lost session or transport means reconnect. One
   * request's broken answer does not (its connection already checks the session's health).
   */
  reportFailure(conn: UpstreamConnection, error: unknown): void {
    if (error instanceof UpstreamSessionExpiredError) {
      this.lose(conn, 'the server forgot the session (HTTP 404)', 'session_expired');
    } else if (error instanceof UpstreamRequestBrokenError) {
      checkSessionAfterBreak(conn, this.config, (reason) =>
        this.lose(conn, reason, 'connection_lost'),
      );
    } else if (error instanceof UpstreamConnectionError) {
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

  /** Drops a broken task connection (without DELETE: the tasks bound to it may live on). */
  dropTaskConnection(conn: UpstreamConnection): void {
    if (this.taskConnection !== conn) return;
    this.taskConnection = undefined;
    void conn.close('task session lost', false);
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    clearTimeout(this.retryTimer);
    clearTimeout(this.probeTimer);
    this.keepalive.stop();
    this.transition('closed', 'pool closed');
    const pooled = [this.current, this.attemptConnection];
    this.current = undefined;
    await Promise.all([
      ...pooled.map((conn) => conn?.close('pool closed', true)),
      this.taskConnection?.close('pool closed', false),
    ]);
    await this.attempt?.catch(() => undefined);
  }

  private async openTaskConnection(): Promise<UpstreamConnection> {
    const conn = this.newConnection((reason) => {
      this.deps.logger.info({ server: this.server, reason }, 'upstream task session lost');
      this.dropTaskConnection(conn);
    });
    try {
      await conn.connect();
    } catch (error) {
      throw new UpstreamUnavailableError(this.server, this.state, describe(error));
    }
    if (this.state === 'closed') {
      await conn.close('pool closed', false);
      throw new UpstreamUnavailableError(this.server, 'closed', 'pool closed');
    }
    this.taskConnection = conn;
    return conn;
  }

  private newConnection(onLost: (reason: string) => void): UpstreamConnection {
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
    });
    return conn;
  }

  private runAttempt(): Promise<void> {
    this.attempt ??= this.attemptOnce().finally(() => {
      this.attempt = undefined;
      this.notify();
    });
    return this.attempt;
  }

  /** One connect: spawn/open + initialize, then tools/list, the request that proves health. */
  private async attemptOnce(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const conn = this.newConnection((reason) => this.lose(conn, reason, 'connection_lost'));
    this.attemptConnection = conn;
    try {
      await conn.connect();
      const tools = await readToolCatalog(conn);
      if (this.state === 'closed') return void (await conn.close('pool closed', true));
      this.current = conn;
      this.failures = 0;
      this.everReady = true;
      this.tools = tools;
      this.capabilities = conn.capabilities;
      clearTimeout(this.probeTimer);
      this.transition('ready', `connected, ${tools.length} tools`);
      this.keepalive.watch(conn);
      this.deps.onToolsChanged(this.status());
    } catch (error) {
      // A pooled session never carries native tasks, so its DELETE is allowed.
      await conn.close('connect failed', true);
      if (this.state !== 'closed') this.attemptFailed(classifyConnectFailure(error));
    } finally {
      this.attemptConnection = undefined;
    }
  }

  private attemptFailed(failure: FailureClass): void {
    if (failure.permanent) return this.park(failure.reason);
    this.failures += 1;
    if (this.state === 'parked' || this.failures >= this.deps.config.connectAttempts) {
      return this.park(failure.reason);
    }
    this.transition(this.everReady ? 'degraded' : 'connecting', failure.reason);
    this.deps.metrics.onReconnect?.(this.server, 'connect_failed');
    this.retryTimer = setTimeout(
      () => void this.runAttempt(),
      this.deps.backoff.delayMs(this.failures),
    ).unref();
  }

  private park(reason: string): void {
    this.transition('parked', reason);
    clearTimeout(this.probeTimer);
    this.probeTimer = setTimeout(() => {
      this.lastProbeAt = Date.now();
      this.deps.metrics.onReconnect?.(this.server, 'probe');
      void this.runAttempt();
    }, this.deps.config.parkedProbeMs).unref();
  }

  private probeForWork(): void {
    const gap = Math.min(this.deps.config.parkedProbeMs, MAX_WORK_PROBE_GAP_MS);
    if (this.attempt || Date.now() - this.lastProbeAt < gap) return;
    this.lastProbeAt = Date.now();
    this.deps.metrics.onReconnect?.(this.server, 'work');
    void this.runAttempt();
  }

  /** The pooled connection broke: reconnect at once the first time, then with backoff. */
  private lose(conn: UpstreamConnection, reason: string, kind: string): void {
    if (conn !== this.current || this.state === 'closed') return;
    this.current = undefined;
    this.keepalive.stop();
    void conn.close(reason, false);
    this.deps.metrics.onReconnect?.(this.server, kind);
    this.failures += 1;
    this.transition('degraded', reason);
    if (this.failures === 1) void this.runAttempt();
    else
      this.retryTimer = setTimeout(
        () => void this.runAttempt(),
        this.deps.backoff.delayMs(this.failures - 1),
      ).unref();
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

  /**
   * Every change of state is a log line and a metric (requirement 13). A repeated identical
   * failure is silent, so a parked server's probes do not flood the log.
   */
  private transition(to: SupervisorState, reason: string): void {
    const from = this.state;
    const sameReason = reason === this.reason;
    this.reason = reason;
    if (from === to && sameReason) return;
    const line = { server: this.server, from, to, reason };
    if (from === to) this.deps.logger.info(line, 'upstream still ' + to);
    else if (to === 'parked' || to === 'degraded') this.deps.logger.warn(line, 'upstream state');
    else this.deps.logger.info(line, 'upstream state');
    this.state = to;
    if (from !== to) this.deps.metrics.onState?.(this.server, to);
    this.notify();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (done()) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.waiters.add(check);
    });
  }
}
