import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import { BackoffPolicy, DEFAULT_BACKOFF } from './backoff.policy';
import { BoundSessionAdapter, breaksSession } from './2025/bound-session.adapter';
import { ProcessGroupRegistry } from './transport/process-group.registry';
import { ResumedSessionCache } from './2025/resumed-session.cache';
import {
  LEGACY_ERA,
  hasStatelessSide,
  needsSession,
  refusesSession,
  sessionless,
} from './protocol-era.rules';
import { describe } from './failure.classifier';
import { buildSides, type ServerSides } from './server-sides';
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
  TaskListen,
  TaskListenHandlers,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';

/**
 * The poller's connection layer: per configured server a 2025-11-25 session supervisor and, over
 * HTTP or stdio unless pinned to 2025-11-25, a 2026-07-28 supervisor that also finds which era
 * the server speaks (latent where nothing needs it yet: woken by a refused session); the native
 * task sessions and the resumed sessions' cache. `start()` at bootstrap, `close()` at shutdown.
 */
export class UpstreamPool implements UpstreamPort {
  private readonly servers = new Map<string, ServerSides>();
  private readonly listeners = new Set<(status: ServerStatus) => void>();
  private readonly stateListeners = new Set<(server: string, state: SupervisorState) => void>();
  private readonly pushListeners = new Set<(event: SessionPushEvent) => void>();
  private readonly registry: ProcessGroupRegistry;
  private readonly resumed: ResumedSessionCache;
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
    const wiring = {
      factory,
      logger,
      backoff: new BackoffPolicy({ ...DEFAULT_BACKOFF, ...options.backoff }),
      closeTimeoutMs,
      sessionMetrics: this.sideMetrics('session'),
      statelessMetrics: this.sideMetrics('stateless'),
      onCallDuration: hooks.onCallDuration?.bind(hooks),
      onToolsChanged: (server: string) => this.emitToolsChanged(server),
      onTaskPush: (event: SessionPushEvent) =>
        tellEach(this.logger, this.pushListeners, [event], event.server, 'push'),
      onSessionFailed: (server: string, error: unknown) => this.sessionFailed(server, error),
      onStatelessRefused: (server: string, method: string, error: unknown) =>
        this.servers.get(server)?.stateless?.rediscover(`${method} refused: ${describe(error)}`),
      onEra: (config: ServerConfig, era: TaskProtocolVersion) => this.eraChanged(config, era),
    };
    for (const config of servers) this.servers.set(config.name, buildSides(config, wiring));
    this.resumed = new ResumedSessionCache({
      factory,
      logger,
      metrics: hooks,
      closeTimeoutMs,
      idleMs: options.resumedSessionIdleMs ?? 300_000,
    });
  }

  /**
   * Reaps a crashed predecessor's children, then starts the sides: the 2026-07-28 side where the
   * pin or `mcp-tasks` toolsets need one, the session side where a session is needed.
   */
  start(): void {
    if (this.options.reapOrphans !== false) this.registry.reapOrphans();
    for (const { config, supervisor, stateless } of this.servers.values()) {
      if (hasStatelessSide(config)) stateless?.start();
      if (needsSession(config)) supervisor.start();
    }
  }

  async session(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    const sides = this.sides(server);
    if (sides.toolCalls && this.sessionless(sides)) return sides.toolCalls;
    await untilAborted(sides.supervisor.ready(), signal, server, 'connect');
    return sides.pooled;
  }

  async taskSession(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    const { supervisor, pooled } = this.sides(server);
    const conn = await untilAborted(supervisor.taskConnectionReady(), signal, server, 'connect');
    if (conn === supervisor.currentConnection) return pooled;
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
    const { config } = this.sides(server);
    const resuming = this.resumed.get(config, sessionId, protocolVersion);
    return untilAborted(resuming, signal, server, 'session resume');
  }

  async taskProtocol(server: string, signal?: AbortSignal): Promise<TaskProtocolVersion> {
    const { config, stateless: side } = this.sides(server);
    // Asked of the 2026-07-28 side even when pinned: work revives it if parked.
    if (side) return untilAborted(side.protocol(), signal, server, 'finding the task protocol');
    return config.protocolVersion ?? LEGACY_ERA;
  }

  statelessSession(server: string): StatelessSession {
    const { client } = this.sides(server);
    if (!client) throw new UpstreamUnavailableError(server, 'closed', 'no 2026-07-28 client');
    return client;
  }

  /** Whether the server may push: a 2026-07-28 client serves it or may (HTTP or stdio, not SSE). */
  canListen(server: string): boolean {
    return this.servers.get(server)?.client !== undefined;
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
    const { stateless: side, client } = this.sides(server);
    if (!side || side.era === LEGACY_ERA || !client) {
      throw new UpstreamUnavailableError(server, 'closed', 'no 2026-07-28 side to listen on');
    }
    return client.listenTasks(taskIds, handlers);
  }

  /**
   * The status of the side that serves the server (docs/connections.md, "Which side serves"):
   * the 2026-07-28 side unless the server was found to speak 2025-11-25 only; with the session
   * side's own status beside it when that side runs too.
   */
  status(server: string): ServerStatus {
    const { config, supervisor, stateless: side } = this.sides(server);
    if (side && side.era !== LEGACY_ERA) {
      const status = side.status();
      return supervisor.started ? { ...status, sessionSide: supervisor.status() } : status;
    }
    const known = config.protocolVersion ?? (config.transport === 'http' ? side?.era : LEGACY_ERA);
    return known ? { ...supervisor.status(), taskProtocol: known } : supervisor.status();
  }

  /** Statuses of every configured server (for the catalog and health endpoints). */
  statuses(): ServerStatus[] {
    return [...this.servers.keys()].map((server) => this.status(server));
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
      ...[...this.servers.values()].flatMap(({ supervisor, stateless, client }) => [
        supervisor.close(),
        (stateless?.close() ?? Promise.resolve()).then(() => client?.close()), // its stdio child
      ]),
      this.resumed.close(),
    ]);
    this.listeners.clear();
    this.stateListeners.clear();
    this.pushListeners.clear();
  }

  private sides(server: string): ServerSides {
    const sides = this.servers.get(server);
    if (!sides) throw new UpstreamUnavailableError(server, 'closed', 'not configured');
    if (this.closed) throw new UpstreamUnavailableError(server, 'closed', 'pool closed');
    return sides;
  }

  /** The side whose state is the server's: the 2026-07-28 one unless the era is 2025-11-25. */
  private serving(server: string): 'session' | 'stateless' {
    const side = this.servers.get(server)?.stateless;
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

  /**
   * Served without a session (docs/connections.md, "Which side serves"): pinned to 2026-07-28, or
   * found to speak it, listing no session version, with a session refused since.
   */
  private sessionless({ config, stateless, sessionRefused }: ServerSides): boolean {
    if (!stateless) return false;
    return sessionless(config) || (stateless.listsNoSessionVersion && sessionRefused);
  }

  /**
   * A failed session may mean a server that speaks 2026-07-28 only (or since a redeploy). Only a
   * refusal in the server's own answer counts as evidence against sessions: a timeout or a lost
   * connection says nothing about what it speaks.
   */
  private sessionFailed(server: string, error: unknown): void {
    const sides = this.servers.get(server);
    if (!sides?.stateless) return;
    const refused = refusesSession(error);
    if (refused) sides.sessionRefused = true;
    if (sides.stateless.era !== LEGACY_ERA) {
      if (this.sessionless(sides)) this.serve(sides);
    } else if (refused || hasStatelessSide(sides.config)) {
      // A latent side asks only after a refusal; one that found 2025-11-25 after any failure.
      sides.stateless.rediscover('a 2025-11-25 session could not be opened');
    }
  }

  /** The era, or the versions it lists, changed: which sides run, the gauge and the catalog. */
  private eraChanged(config: ServerConfig, era: TaskProtocolVersion): void {
    const sides = this.servers.get(config.name);
    if (!sides || this.closed) return;
    this.logger.info({ server: config.name, era }, 'upstream era found');
    // A session refused before this answer is evidence only for the versions it lists.
    if (!sides.stateless?.listsNoSessionVersion) sides.sessionRefused = false;
    this.serve(sides);
  }

  /** Runs the session side where it is needed, puts it to rest where not, and publishes. */
  private serve(sides: ServerSides): void {
    const { config, supervisor, stateless } = sides;
    if (this.closed) return;
    if (stateless?.era === LEGACY_ERA || (!this.sessionless(sides) && needsSession(config))) {
      supervisor.start();
    } else if (supervisor.started) {
      void supervisor.stop('the server speaks 2026-07-28 without a session');
    }
    const status = this.status(config.name);
    this.hooks.onState?.(config.name, status.state);
    tellEach(this.logger, this.listeners, [status], status.server, 'tools');
  }

  private emitToolsChanged(server: string): void {
    tellEach(this.logger, this.listeners, [this.status(server)], server, 'tools');
  }
}
