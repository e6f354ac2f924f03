import type { SupervisorState } from './upstream.port';

/**
 * The logger the pool writes to: pino's `(object, message)` signature, so a pino Logger fits as is.
 * Kept as an interface so this library does not depend on the logging library.
 */
export interface UpstreamLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/**
 * Metric callbacks, injected so this library does not depend on the metrics library. The poller
 * wires them to `mcp_tasks_upstream_state`, `mcp_tasks_upstream_reconnects_total` and
 * `mcp_tasks_upstream_call_duration_seconds`.
 */
export interface UpstreamMetricHooks {
  onState?(server: string, state: SupervisorState): void;
  /** `reason` is a short bounded label: connect_failed, connection_lost, session_expired, probe… */
  onReconnect?(server: string, reason: string): void;
  /** `operation` is the JSON-RPC method (tools/call, tasks/get, ping…), a bounded label. */
  onCallDuration?(server: string, operation: string, seconds: number): void;
}

/** Retry timing. The defaults are connections.md's: 1 s doubling to 60 s, ±20 % jitter. */
export interface BackoffSettings {
  initialMs: number;
  maxMs: number;
  /** Fraction of the delay added or removed at random, so workers do not reconnect in step. */
  jitter: number;
}

/** Pool-wide options; everything per server comes from its ServerConfig. */
export interface UpstreamPoolOptions {
  metrics?: UpstreamMetricHooks;
  /**
   * Where stdio process groups are recorded, so a restarted worker can reap the children its
   * crashed predecessor left. Defaults to one directory per host and OS user (tests isolate).
   */
  processGroupDir?: string;
  /** Overrides the backoff defaults (tests use tiny values). */
  backoff?: Partial<BackoffSettings>;
  /** Idle time after which a resumed session is dropped from the cache. Default 5 minutes. */
  resumedSessionIdleMs?: number;
  /** Bound on closing a client and on the session DELETE. Default 3 s. */
  closeTimeoutMs?: number;
  /** Reap stdio children a crashed predecessor left behind at construction. Default true. */
  reapOrphans?: boolean;
}

/**
 * Tells every listener of one kind. A listener's failure is logged and reaches neither the
 * other listeners nor the supervisor that reported the event.
 */
export function tellEach<A extends unknown[]>(
  logger: UpstreamLogger,
  listeners: Iterable<(...args: A) => void>,
  args: A,
  server: string,
  kind: string,
): void {
  for (const listener of listeners) {
    try {
      listener(...args);
    } catch (error) {
      logger.error({ server, err: String(error) }, `${kind} listener failed`);
    }
  }
}
