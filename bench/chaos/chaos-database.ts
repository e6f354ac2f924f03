import { Pool, QueryResultRow } from 'pg';
import { EmbeddedDatabase, startEmbeddedPostgres } from '@app/dev-db';
import { migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import {
  startFailoverPair,
  type FailoverPair,
  type FailoverTimes,
} from '../../test/helpers/postgres-failover';
import { adminQuery } from '../../test/helpers/db';
import { INSTALL_LEASE_AUDIT_SQL } from './lease-audit.sql';

/**
 * The run's own Postgres (embedded, on a fixed port) so the run can restart it: stop, then start
 * again on the same data directory and port, which is what the apps' reconnect logic meets when
 * a managed database fails over or restarts. Persistent (not ephemeral): an ephemeral cluster
 * wipes its data directory on stop.
 */
export class ChaosDatabase {
  readonly pool: Pool;
  private constructor(
    private server: EmbeddedDatabase | FailoverPair,
    private readonly dataDir: string,
  ) {
    // A small pool for the driver, the watcher and the checker; idle clients broken by the
    // restart emit 'error', which must not crash the run.
    this.pool = new Pool({ connectionString: server.url, max: 4 });
    this.pool.on('error', () => undefined);
  }

  get url(): string {
    return this.server.url;
  }

  /**
   * `replicated`: instead of the embedded server, a primary and a synchronous streaming standby
   * behind a TCP proxy (test/helpers/postgres-failover.ts), for the failover fault; `url` is
   * the proxy's, as a `-rw` Service's would be.
   */
  static async start(dataDir: string, replicated = false): Promise<ChaosDatabase> {
    const server = replicated
      ? await startFailoverPair(dataDir)
      : await startEmbeddedPostgres({ dataDir });
    await migrateDatabase(server.url, MIGRATIONS, 'chaos-migrate');
    await adminQuery(server.url, INSTALL_LEASE_AUDIT_SQL);
    return new ChaosDatabase(server, dataDir);
  }

  /** Stops the server and, `downMs` later, starts it again on the same data directory and port. */
  async restart(downMs = 0): Promise<void> {
    if ('failover' in this.server) throw new Error('a replicated database fails over instead');
    await this.server.stop();
    if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
    this.server = await startEmbeddedPostgres({ dataDir: this.dataDir, port: this.server.port });
  }

  /** The primary crashes, the standby is promoted after `downMs`, the proxy switches to it. */
  async failover(downMs: number): Promise<FailoverTimes> {
    if (!('failover' in this.server)) throw new Error('failover needs a replicated database');
    return this.server.failover(downMs);
  }

  async query<R extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.pool.query<R>(sql, params)).rows;
  }

  /** Like `query`, but rides out a restart in progress (retries until `timeoutMs`). */
  async queryPatiently<R extends QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    timeoutMs = 30_000,
  ): Promise<R[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.query<R>(sql, params);
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }

  async stop(): Promise<void> {
    await this.pool.end().catch(() => undefined);
    await this.server.stop();
  }
}
