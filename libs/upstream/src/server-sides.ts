import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import type { BackoffPolicy } from './backoff.policy';
import { PooledSessionAdapter } from './2025/pooled-session.adapter';
import { ServerSupervisor } from './2025/server.supervisor';
import { StatelessHttpClient } from './2026/stateless-http.client';
import { StatelessStdioClient } from './2026/stateless-stdio.client';
import { StatelessSupervisor } from './2026/stateless.supervisor';
import { StatelessToolSession } from './2026/stateless-tool.session';
import { hasStatelessSide, mayServeStateless } from './protocol-era.rules';
import type { TransportFactory } from './transport/transport.factory';
import type { UpstreamLogger, UpstreamMetricHooks } from './upstream.hooks';
import type { SessionPushEvent } from './upstream.port';

/**
 * One configured server's parts: its session side; over HTTP its 2026-07-28 client; unless pinned
 * to 2025-11-25, over HTTP or stdio, its 2026-07-28 side (over stdio with a client of its own) and
 * the stateless tool calls used when no session serves (docs/connections.md, "Which side
 * serves"). Which side serves is `UpstreamPool`'s decision.
 */
export interface ServerSides {
  readonly config: ServerConfig;
  readonly supervisor: ServerSupervisor;
  readonly pooled: PooledSessionAdapter;
  /** Its 2026-07-28 client; over stdio a child of its own, started by the first request. */
  readonly client?: StatelessHttpClient | StatelessStdioClient;
  readonly stateless?: StatelessSupervisor;
  readonly toolCalls?: StatelessToolSession;
  /**
   * The server's own answer refused a session (`refusesSession`) since its `server/discover` last
   * listed a session version.
   */
  sessionRefused: boolean;
}

/** What the sides share, and where their events go (the pool). */
export interface SidesWiring {
  factory: TransportFactory;
  logger: UpstreamLogger;
  backoff: BackoffPolicy;
  closeTimeoutMs: number;
  sessionMetrics: UpstreamMetricHooks;
  statelessMetrics: UpstreamMetricHooks;
  onCallDuration?(server: string, method: string, seconds: number): void;
  onToolsChanged(server: string): void;
  onTaskPush(event: SessionPushEvent): void;
  /** The session side failed to connect. */
  onSessionFailed(server: string, error: unknown): void;
  /** A 2026-07-28 request was refused in a way that may mean the server changed era. */
  onStatelessRefused(server: string, method: string, error: unknown): void;
  onEra(config: ServerConfig, era: TaskProtocolVersion): void;
}

/** Builds a server's parts; none is started. */
export function buildSides(config: ServerConfig, wiring: SidesWiring): ServerSides {
  const { name } = config;
  const { logger, backoff } = wiring;
  const supervisor = new ServerSupervisor({
    config,
    factory: wiring.factory,
    logger,
    metrics: wiring.sessionMetrics,
    backoff,
    closeTimeoutMs: wiring.closeTimeoutMs,
    onToolsChanged: () => wiring.onToolsChanged(name),
    onTaskPush: (event) => wiring.onTaskPush(event),
    onConnectFailed: (_, error) => wiring.onSessionFailed(name, error),
  });
  const sides = { config, supervisor, pooled: new PooledSessionAdapter(supervisor) };
  if (config.transport !== 'http' && !mayServeStateless(config)) {
    return { ...sides, sessionRefused: false };
  }
  const onCallDuration = (method: string, seconds: number) =>
    wiring.onCallDuration?.(name, method, seconds);
  const onRefused = (method: string, error: unknown) =>
    wiring.onStatelessRefused(name, method, error);
  const client =
    config.transport === 'stdio'
      ? new StatelessStdioClient(config, wiring.factory, logger, onCallDuration, onRefused)
      : // The gateway's HTTP client under it, as under every upstream request (its default).
        new StatelessHttpClient(config, logger, undefined, onCallDuration, onRefused);
  if (!mayServeStateless(config)) return { ...sides, client, sessionRefused: false };
  const stateless = new StatelessSupervisor({
    config,
    client,
    logger,
    metrics: wiring.statelessMetrics,
    backoff,
    onEra: (era) => wiring.onEra(config, era),
    onToolsChanged: () => wiring.onToolsChanged(name),
    latent: !hasStatelessSide(config),
  });
  const toolCalls = new StatelessToolSession(client, () => stateless.status().capabilities);
  return { ...sides, client, stateless, toolCalls, sessionRefused: false };
}
