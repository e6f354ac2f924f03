import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import { BackoffPolicy, DEFAULT_BACKOFF } from './backoff.policy';
import { BoundSessionAdapter, breaksSession } from './2025/bound-session.adapter';
import { PooledSessionAdapter } from './2025/pooled-session.adapter';
import { ProcessGroupRegistry } from './transport/process-group.registry';
import { ResumedSessionCache } from './2025/resumed-session.cache';
import { ServerSupervisor } from './2025/server.supervisor';
import { StatelessHttpClient } from './2026/stateless-http.client';
import { LEGACY_ERA, hasStatelessSide, needsSession, sessionless } from './protocol-era.rules';
import { StatelessSupervisor } from './2026/stateless.supervisor';
import { StatelessToolSession } from './2026/stateless-tool.session';
import {
  TaskListenStream,
  type TaskListen,
  type TaskListenHandlers,
} from './2026/task-listen.stream';
import { describe } from './failure.classifier';
import { TransportFactory } from './transport/transport.factory';
import { UpstreamUnavailableError, untilAborted } from './upstream.errors';
import {
  tellEach,
  type UpstreamLogger,
  type UpstreamMetricHooks,
  type UpstreamPoolOptions,
} from './upstream.hooks';
import type {
  ServerStatus,
  SessionPushEvent,
  StatelessSession,
  SupervisorState,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';

/**
 * The poller's connection layer: per configured server a 2025-11-25 session supervisor and, for an
 * HTTP server with `mcp-tasks` toolsets or pinned to 2026-07-28, a 2026-07-28 supervisor that also
 * finds which era the server speaks; the separate native-task sessions and the cache of resumed
 * sessions. Construct it, call `start()` at application bootstrap, `close()` at shutdown.
 */
export class UpstreamPool implements UpstreamPort {
  private readonly supervisors = new Map<string, ServerSupervisor>();
  private readonly statelessSides = new Map<string, StatelessSupervisor>();
  private readonly sessions = new Map<string, UpstreamSession>();
  private readonly listeners = new Set<(status: ServerStatus) => void>();
  private readonly stateListeners = new Set<(server: string, state: SupervisorState) => void>();
  private readonly pushListeners = new Set<(event: SessionPushEvent) => void>();
  private readonly registry: ProcessGroupRegistry;
  private readonly resumed: ResumedSessionCache;
  private readonly stateless = new Map<string, StatelessHttpClient>();
  private closed = false;

  /**
   * @param servers the validated `mcpServers` entries.
   * @param logger pino or anything with `info/warn/error/debug(obj, msg)`.
   * @param metrics callbacks for the state gauge, reconnect counter and call duration histogram.
   * @param options the process-group directory (orphan reaping), backoff and close bounds.
   */
  constructor(
    servers: ServerConfig[],
    private readonly logger: UpstreamLogger,
    private readonly hooks: UpstreamMetricHooks = {},
    private readonly options: UpstreamPoolOptions = {},
  ) {
    this.registry = new ProcessGroupRegistry(logger, options.processGroupDir);
    const factory = new TransportFactory(this.registry, logger);
    const closeTimeoutMs = options.closeTimeoutMs ?? 3000;
    const backoff = new BackoffPolicy({ ...DEFAULT_BACKOFF, ...options.backoff });
    for (const config of servers) {
      const name = config.name;
      const supervisor = new ServerSupervisor({
        config,
        factory,
        logger,
        metrics: this.sideMetrics('session'),
        backoff,
        closeTimeoutMs,
        onToolsChanged: () => this.emitToolsChanged(name),
        onTaskPush: (event) =>
          tellEach(this.logger, this.pushListeners, [event], event.server, 'push'),
        onConnectFailed: () => {
          const side = this.statelessSides.get(name);
          if (side?.era === LEGACY_ERA) side.rediscover('a 2025-11-25 session could not be opened');
        },
      });
      this.supervisors.set(name, supervisor);
      this.sessions.set(name, new PooledSessionAdapter(supervisor));
      if (config.transport !== 'http') continue;
      // The gateway's HTTP client under it, as under every upstream request (its default).
      const client = new StatelessHttpClient(
        config,
        logger,
        undefined,
        (method, seconds) => hooks.onCallDuration?.(name, method, seconds),
        (method, error) =>
          this.statelessSides.get(name)?.rediscover(`${method} refused: ${describe(error)}`),
      );
      this.stateless.set(name, client);
      if (!hasStatelessSide(config)) continue;
      const side = new StatelessSupervisor({
        config,
        client,
        logger,
        metrics: this.sideMetrics('stateless'),
        backoff,
        onEra: (era) => this.eraChanged(config, era),
        onToolsChanged: () => this.emitToolsChanged(name),
      });
      this.statelessSides.set(name, side);
      if (sessionless(config)) {
        this.sessions.set(name, new StatelessToolSession(client, () => side.status().capabilities));
      }
    }
    this.resumed = new ResumedSessionCache({
      factory,
      logger,
      metrics: hooks,
      closeTimeoutMs,
      idleMs: options.resumedSessionIdleMs ?? 300_000,
    });
  }

  /**
   * Reaps children a crashed predecessor left, then starts every server's side: the 2026-07-28
   * side where there is one (it finds the era), the session side where no 2026-07-28 side serves
   * or `ordinary`/`sync-call` toolsets need a session.
   */
  start(): void {
    if (this.options.reapOrphans !== false) this.registry.reapOrphans();
    for (const supervisor of this.supervisors.values()) {
      const side = this.statelessSides.get(supervisor.server);
      side?.start();
      if (!side || needsSession(supervisor.config)) supervisor.start();
    }
  }

  async session(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    const supervisor = this.supervisor(server);
    if (!sessionless(supervisor.config)) {
      await untilAborted(supervisor.ready(), signal, server, 'connect');
    }
    return this.sessions.get(server)!;
  }

  async taskSession(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    const supervisor = this.supervisor(server);
    const conn = await untilAborted(supervisor.taskConnectionReady(), signal, server, 'connect');
    if (conn === supervisor.currentConnection) return this.sessions.get(server)!;
    return new BoundSessionAdapter(conn, (broken, error) => {
      if (breaksSession(error)) supervisor.dropTaskConnection(broken, error);
    });
  }

  async resumeSession(
    server: string,
    sessionId: string,
    protocolVersion: string,
    signal?: AbortSignal,
  ): Promise<UpstreamSession> {
    const supervisor = this.supervisor(server);
    const resuming = this.resumed.get(supervisor.config, sessionId, protocolVersion);
    return untilAborted(resuming, signal, server, 'session resume');
  }

  async taskProtocol(server: string, signal?: AbortSignal): Promise<TaskProtocolVersion> {
    const { config } = this.supervisor(server);
    // Asked of the 2026-07-28 side even when pinned: work revives it if parked.
    const side = this.statelessSides.get(server);
    if (side) return untilAborted(side.protocol(), signal, server, 'finding the task protocol');
    return config.protocolVersion ?? LEGACY_ERA;
  }

  statelessSession(server: string): StatelessSession {
    this.supervisor(server);
    const client = this.stateless.get(server);
    if (!client) throw new UpstreamUnavailableError(server, 'closed', 'not an HTTP server');
    return client;
  }

  /**
   * Opens `subscriptions/listen` for these remote task IDs on a server whose 2026-07-28 side
   * serves it (docs/connections.md, "Push"). Throws `UpstreamUnavailableError` for a server
   * without one; a refusal or a lost stream is reported through `handlers.onEnd`.
   */
  listenTasks(
    server: string,
    taskIds: readonly string[],
    handlers: TaskListenHandlers,
  ): TaskListen {
    const { config } = this.supervisor(server);
    const side = this.statelessSides.get(server);
    if (!side || side.era === LEGACY_ERA) {
      throw new UpstreamUnavailableError(server, 'closed', 'no 2026-07-28 side to listen on');
    }
    const stream = new TaskListenStream(config, taskIds, handlers);
    stream.start();
    return stream;
  }

  /**
   * The status of the side that serves the server (docs/connections.md, "Which side serves"):
   * the 2026-07-28 side unless the server was found to speak 2025-11-25 only; with the session
   * side's own status beside it when that side runs too.
   */
  status(server: string): ServerStatus {
    const supervisor = this.supervisor(server);
    const side = this.statelessSides.get(server);
    if (side && side.era !== LEGACY_ERA) {
      const status = side.status();
      return supervisor.started ? { ...status, sessionSide: supervisor.status() } : status;
    }
    const { config } = supervisor;
    const known = config.protocolVersion ?? (config.transport === 'http' ? side?.era : LEGACY_ERA);
    return known ? { ...supervisor.status(), taskProtocol: known } : supervisor.status();
  }

  /** Statuses of every configured server (for the catalog and health endpoints). */
  statuses(): ServerStatus[] {
    return [...this.supervisors.keys()].map((server) => this.status(server));
  }

  onToolsChanged(listener: (status: ServerStatus) => void): void {
    this.listeners.add(listener);
  }

  /** Called on every change of a server's supervisor state (after the `onState` hook). */
  onStateChange(listener: (server: string, state: SupervisorState) => void): void {
    this.stateListeners.add(listener);
  }

  /** Told of what 2025-11-25 task sessions push (docs/connections.md, "Push"). */
  onTaskPush(listener: (event: SessionPushEvent) => void): void {
    this.pushListeners.add(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([
      ...[...this.supervisors.values()].map((supervisor) => supervisor.close()),
      ...[...this.statelessSides.values()].map((side) => side.close()),
      this.resumed.close(),
    ]);
    this.listeners.clear();
    this.stateListeners.clear();
    this.pushListeners.clear();
  }

  private supervisor(server: string): ServerSupervisor {
    const supervisor = this.supervisors.get(server);
    if (!supervisor) throw new UpstreamUnavailableError(server, 'closed', 'not configured');
    if (this.closed) throw new UpstreamUnavailableError(server, 'closed', 'pool closed');
    return supervisor;
  }

  /** The side whose state is the server's: the 2026-07-28 one unless the era is 2025-11-25. */
  private serving(server: string): 'session' | 'stateless' {
    const side = this.statelessSides.get(server);
    return side && side.era !== LEGACY_ERA ? 'stateless' : 'session';
  }

  /**
   * A side's metric hooks: only the serving side sets the state gauge (one server, one state);
   * both count reconnects and call durations, and both wake the state listeners (the catalog
   * reads the combined status).
   */
  private sideMetrics(side: 'session' | 'stateless'): UpstreamMetricHooks {
    return {
      ...this.hooks,
      onState: (server, state) => {
        if (this.serving(server) === side) this.hooks.onState?.(server, state);
        tellEach(this.logger, this.stateListeners, [server, state], server, 'state');
      },
    };
  }

  /** The era changed: the serving side changes, and with it the gauge and the catalog. */
  private eraChanged(config: ServerConfig, era: TaskProtocolVersion): void {
    const supervisor = this.supervisors.get(config.name);
    if (!supervisor || this.closed) return;
    this.logger.info({ server: config.name, era }, 'upstream era found');
    if (era === LEGACY_ERA) supervisor.start();
    else if (!needsSession(config)) void supervisor.stop('the server speaks 2026-07-28');
    const status = this.status(config.name);
    this.hooks.onState?.(config.name, status.state);
    tellEach(this.logger, this.listeners, [status], status.server, 'tools');
  }

  private emitToolsChanged(server: string): void {
    tellEach(this.logger, this.listeners, [this.status(server)], server, 'tools');
  }
}
