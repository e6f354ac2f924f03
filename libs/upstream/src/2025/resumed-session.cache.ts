import type { ServerConfig } from '@app/config';
import { BoundSessionAdapter, breaksSession } from './bound-session.adapter';
import type { TransportFactory } from '../transport/transport.factory';
import { UpstreamConnection } from './upstream.connection';
import { UpstreamUnavailableError } from '../upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks } from '../upstream.hooks';

interface Entry {
  connection: UpstreamConnection;
  session: BoundSessionAdapter;
  lastUsed: number;
}

export interface ResumedSessionDeps {
  factory: TransportFactory;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  closeTimeoutMs: number;
  idleMs: number;
}

/**
 * Streamable HTTP sessions reattached by stored ID (native task polls), one per session ID,
 * dropped after idleMs without use. Closing one never sends DELETE: the session belongs to the
 * tasks bound to it, not to this worker (contracts.md, mcp-tasks).
 */
export class ResumedSessionCache {
  private readonly entries = new Map<string, Entry>();
  private readonly opening = new Map<string, Promise<Entry>>();
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly deps: ResumedSessionDeps) {}

  async get(
    config: ServerConfig,
    sessionId: string,
    protocolVersion: string,
  ): Promise<BoundSessionAdapter> {
    if (config.transport !== 'http') {
      throw new UpstreamUnavailableError(
        config.name,
        'ready',
        'only Streamable HTTP sessions can be resumed',
      );
    }
    const key = `${config.name}\u0000${sessionId}`;
    const existing = this.entries.get(key);
    if (existing?.connection.alive) {
      existing.lastUsed = Date.now();
      return existing.session;
    }
    let opening = this.opening.get(key);
    if (!opening) {
      opening = this.open(key, config, sessionId, protocolVersion).finally(() =>
        this.opening.delete(key),
      );
      this.opening.set(key, opening);
    }
    return (await opening).session;
  }

  get size(): number {
    return this.entries.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((entry) => entry.connection.close('pool closed', false)));
  }

  private async open(
    key: string,
    config: ServerConfig,
    sessionId: string,
    protocolVersion: string,
  ): Promise<Entry> {
    const { factory, logger, metrics, closeTimeoutMs } = this.deps;
    const connection: UpstreamConnection = new UpstreamConnection({
      config,
      factory,
      logger,
      metrics,
      closeTimeoutMs,
      resume: { sessionId, protocolVersion },
      onLost: () => this.evict(key, connection),
    });
    await connection.connect();
    const entry: Entry = {
      connection,
      lastUsed: Date.now(),
      session: new BoundSessionAdapter(
        connection,
        (conn, error) => {
          if (breaksSession(error)) this.evict(key, conn);
        },
        () => (entry.lastUsed = Date.now()),
      ),
    };
    this.entries
      .get(key)
      ?.connection.close('replaced', false)
      .catch(() => undefined);
    this.entries.set(key, entry);
    this.startSweeper();
    return entry;
  }

  /** Any failure drops the entry: the next resume builds a fresh transport for the same ID. */
  private evict(key: string, conn: UpstreamConnection): void {
    if (this.entries.get(key)?.connection === conn) this.entries.delete(key);
    void conn.close('resumed session dropped', false);
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    const every = Math.max(1000, Math.min(this.deps.idleMs, 60_000));
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - this.deps.idleMs;
      for (const [key, entry] of this.entries) {
        if (entry.lastUsed < cutoff && entry.connection.pendingRequests === 0) {
          this.evict(key, entry.connection);
        }
      }
    }, every).unref();
  }
}
