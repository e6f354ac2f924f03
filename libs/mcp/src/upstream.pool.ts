import { Contract } from '@app/common';
import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import { BackoffPolicy, DEFAULT_BACKOFF } from './backoff.policy';
import { BoundSessionAdapter, breaksSession } from './bound-session.adapter';
import { PooledSessionAdapter } from './pooled-session.adapter';
import { ProcessGroupRegistry } from './process-group.registry';
import { ResumedSessionCache } from './resumed-session.cache';
import { ServerSupervisor } from './server.supervisor';
import { StatelessHttpClient } from './stateless-http.client';
import { TaskProtocolDiscovery } from './task-protocol.discovery';
import { TransportFactory } from './transport.factory';
import { UpstreamUnavailableError, untilAborted } from './upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks, UpstreamPoolOptions } from './upstream.hooks';
import type {
  ServerStatus,
  StatelessSession,
  SupervisorState,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';

/**
 * The poller's connection layer: one supervisor per configured server, the pooled session of each,
 * the separate native-task sessions and the cache of resumed sessions. Construct it, call
 * `start()` at application bootstrap, `close()` at shutdown.
 */
export class UpstreamPool implements UpstreamPort {
  private readonly supervisors = new Map<string, ServerSupervisor>();
  private readonly sessions = new Map<string, PooledSessionAdapter>();
  private readonly listeners = new Set<(status: ServerStatus) => void>();
  private readonly stateListeners = new Set<(server: string, state: SupervisorState) => void>();
  private readonly registry: ProcessGroupRegistry;
  private readonly resumed: ResumedSessionCache;
  private readonly stateless = new Map<string, StatelessHttpClient>();
  private readonly discovery = new TaskProtocolDiscovery(
    (server) => this.statelessSession(server),
    (server) => this.emitToolsChanged(this.status(server)),
  );
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
    hooks: UpstreamMetricHooks = {},
    private readonly options: UpstreamPoolOptions = {},
  ) {
    const metrics: UpstreamMetricHooks = {
      ...hooks,
      onState: (server, state) => {
        hooks.onState?.(server, state);
        this.emitState(server, state);
      },
    };
    this.registry = new ProcessGroupRegistry(logger, options.processGroupDir);
    const factory = new TransportFactory(this.registry, logger);
    const closeTimeoutMs = options.closeTimeoutMs ?? 3000;
    const backoff = new BackoffPolicy({ ...DEFAULT_BACKOFF, ...options.backoff });
    for (const config of servers) {
      const supervisor = new ServerSupervisor({
        config,
        factory,
        logger,
        metrics,
        backoff,
        closeTimeoutMs,
        onToolsChanged: (status) => this.emitToolsChanged(this.withProtocol(status)),
      });
      this.supervisors.set(config.name, supervisor);
      this.sessions.set(config.name, new PooledSessionAdapter(supervisor));
      if (config.transport === 'http') {
        const client = new StatelessHttpClient(config, logger, fetch, (method, seconds) =>
          metrics.onCallDuration?.(config.name, method, seconds),
        );
        this.stateless.set(config.name, client);
      }
    }
    this.resumed = new ResumedSessionCache({
      factory,
      logger,
      metrics,
      closeTimeoutMs,
      idleMs: options.resumedSessionIdleMs ?? 300_000,
    });
  }

  /** Reaps children a crashed predecessor left, then starts every supervisor. */
  start(): void {
    if (this.options.reapOrphans !== false) this.registry.reapOrphans();
    for (const supervisor of this.supervisors.values()) {
      supervisor.start();
      // Learn the task design early, so the catalog judges mcp-tasks toolsets by the right rules;
      // a server not reachable yet is asked again by its first task.
      const { config } = supervisor;
      if (config.toolsets.some((toolset) => toolset.contract === Contract.McpTasks)) {
        void this.discovery.protocolOf(config).catch(() => undefined);
      }
    }
  }

  async session(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    await untilAborted(this.supervisor(server).ready(), signal, server, 'connect');
    return this.sessions.get(server)!;
  }

  async taskSession(server: string, signal?: AbortSignal): Promise<UpstreamSession> {
    const supervisor = this.supervisor(server);
    const conn = await untilAborted(supervisor.taskConnectionReady(), signal, server, 'connect');
    if (conn === supervisor.currentConnection) return this.sessions.get(server)!;
    return new BoundSessionAdapter(conn, (broken, error) => {
      if (breaksSession(error)) supervisor.dropTaskConnection(broken);
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

  taskProtocol(server: string, signal?: AbortSignal): Promise<TaskProtocolVersion> {
    const discovering = this.discovery.protocolOf(this.supervisor(server).config);
    return untilAborted(discovering, signal, server, 'finding the task protocol');
  }

  statelessSession(server: string): StatelessSession {
    this.supervisor(server);
    const client = this.stateless.get(server);
    if (!client) throw new UpstreamUnavailableError(server, 'closed', 'not an HTTP server');
    return client;
  }

  status(server: string): ServerStatus {
    return this.withProtocol(this.supervisor(server).status());
  }

  /** Statuses of every configured server (for the catalog and health endpoints). */
  statuses(): ServerStatus[] {
    return [...this.supervisors.values()].map((supervisor) =>
      this.withProtocol(supervisor.status()),
    );
  }

  onToolsChanged(listener: (status: ServerStatus) => void): void {
    this.listeners.add(listener);
  }

  /** Called on every change of a server's supervisor state (after the `onState` hook). */
  onStateChange(listener: (server: string, state: SupervisorState) => void): void {
    this.stateListeners.add(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([
      ...[...this.supervisors.values()].map((supervisor) => supervisor.close()),
      this.resumed.close(),
    ]);
    this.listeners.clear();
    this.stateListeners.clear();
  }

  private supervisor(server: string): ServerSupervisor {
    const supervisor = this.supervisors.get(server);
    if (!supervisor) throw new UpstreamUnavailableError(server, 'closed', 'not configured');
    if (this.closed) throw new UpstreamUnavailableError(server, 'closed', 'pool closed');
    return supervisor;
  }

  /**
   * The status with the task design, and with the tools the server lists to 2026-07-28 requests
   * added to its 2025-11-25 catalog (a dual-era server may offer different tools on each side).
   */
  private withProtocol(status: ServerStatus): ServerStatus {
    const config = this.supervisors.get(status.server)?.config;
    const taskProtocol = config ? this.discovery.known(config) : undefined;
    if (!taskProtocol) return status;
    const extra = this.discovery.toolsOf(status.server) ?? [];
    const tools = status.tools && [
      ...status.tools,
      ...extra.filter((tool) => !status.tools?.some((known) => known.name === tool.name)),
    ];
    return { ...status, tools, taskProtocol };
  }

  private emitState(server: string, state: SupervisorState): void {
    // A listener's failure must never reach the supervisor that reported the state.
    for (const listener of this.stateListeners) {
      try {
        listener(server, state);
      } catch (error) {
        this.logger.error({ server, err: String(error) }, 'state listener failed');
      }
    }
  }

  private emitToolsChanged(status: ServerStatus): void {
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (error) {
        this.logger.error({ server: status.server, err: String(error) }, 'tools listener failed');
      }
    }
  }
}
