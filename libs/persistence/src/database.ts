import { ClientConfig, Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { isReadOnly, isStatementTimeout } from './database-errors';
import { storableJson, storableParams } from './storable-text';

/** What the SQL repositories need: rows back from a statement. Satisfied by a pool or a client. */
export interface Queryable {
  query<R extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params?: unknown[],
    name?: string,
  ): Promise<R[]>;
}

/** Where and how to connect: the apps', the CLI's and the benchmarks' one pool. */
export interface DatabaseOptions {
  url: string;
  poolSize: number;
  appName: string;
  /** How long a checkout waits for a free connection (or a new one) before it fails; 10 s. */
  connectTimeoutMs?: number;
  /**
   * How long a statement waits for its answer on an open connection before it fails and the
   * connection is discarded; {@link DEFAULT_STATEMENT_TIMEOUT_MS} (see {@link statementBounds}).
   */
  statementTimeoutMs?: number;
}

/**
 * `DATABASE_STATEMENT_TIMEOUT_MS`'s default: forty times a claim of 500 rows out of 20,000 due,
 * JIT compile included (243 ms; docs/benchmarks.md, "What the profiles showed and what
 * changed"), the heaviest statement measured; and short enough that a poller whose heartbeat
 * waits on a silent connection beats again (after the bound and one interval) well before the
 * others may judge it dead (docs/leases.md, "Workers").
 */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** How long an idle pooled connection is kept at most: pg-pool's default. */
const IDLE_TIMEOUT_MS = 10_000;

/**
 * jit=off: with many rows due, the planner's cost estimate for the claim crossed the JIT
 * threshold and compiling took 97 of 243 ms per claim (docs/benchmarks.md); short OLTP
 * statements never win back JIT's compile time. Every connection of the gateway's, the
 * migrator's too (data-source.ts).
 */
export const SESSION_OPTIONS = '-c jit=off';

/**
 * The bound on a statement, on both ends of the connection (docs/operations.md, "Database
 * failover"). pg's `query_timeout` is the one that matters when the server is gone without a
 * word (a node lost, a partition: no FIN, no RST, and no answer, ever): the statement fails
 * after `ms` instead of after the kernel's retransmission timeout, about 15 minutes, and its
 * connection, still waiting for that answer, is never used again (pg-pool discards a client
 * released with an error; {@link Database.transaction} releases one so). The server's
 * `statement_timeout` stops a statement nobody waits for any more, and
 * `idle_in_transaction_session_timeout` ends a session whose client vanished inside a
 * transaction, so its row and advisory locks do not outlive the client by hours (the server's
 * own TCP keepalive). The apps' transactions are a few statements sent back to back; none
 * waits for anything else in between.
 */
export function statementBounds(
  ms: number,
): Pick<
  ClientConfig,
  'query_timeout' | 'statement_timeout' | 'idle_in_transaction_session_timeout'
> {
  return { query_timeout: ms, statement_timeout: ms, idle_in_transaction_session_timeout: ms };
}

/**
 * pg settings of every pool the apps, the CLI and the benchmarks open. The TypeORM migrator
 * (data-source.ts) takes the size, the connect timeout and the session options, not the
 * statement bounds: a migration may rightly run long, and its advisory lock waits for another.
 */
export function poolConfig(options: DatabaseOptions): PoolConfig {
  const statementTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return {
    connectionString: options.url,
    max: options.poolSize,
    application_name: options.appName,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    ...statementBounds(statementTimeoutMs),
    // pg-pool's 10 s, or the statement bound if shorter: a connection idle for longer is closed,
    // so one that went silent while idle is gone within the bound instead of costing a later
    // statement the whole bound.
    idleTimeoutMillis: Math.min(IDLE_TIMEOUT_MS, statementTimeoutMs),
    options: SESSION_OPTIONS,
  };
}

/** What {@link Database.health} finds. */
export type DatabaseHealth = 'writable' | 'read-only' | 'unreachable';

/** How long {@link Database.ping} waits for its answer by default. */
const PING_TIMEOUT_MS = 2000;

/**
 * The gateway's handle on Postgres: a pg pool of its own, so hand-written SQL returns plain
 * rows and can use named prepared statements. TypeORM only runs the migrations (migrator.ts).
 */
export class Database implements Queryable {
  constructor(readonly pool: Pool) {}

  /**
   * Opens a pool. An idle connection that dies (a Postgres restart) is an `error` event on the
   * pool; it is dropped and replaced on the next checkout, and the queries that need it fail
   * with their own errors, so the event itself is not fatal.
   */
  static connect(options: DatabaseOptions): Database {
    const pool = new Pool(poolConfig(options));
    pool.on('error', () => undefined);
    return new Database(pool);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * Whether the database answers within `timeoutMs` and takes writes: the one ping of the
   * readiness probes and of the `mcp_tasks_database_up` gauge, true only for `writable` of
   * {@link health}. Never throws.
   */
  async ping(timeoutMs = PING_TIMEOUT_MS): Promise<boolean> {
    return (await this.health(timeoutMs)) === 'writable';
  }

  /**
   * What the database is to the gateway now: `writable`; `read-only`, a server that answers but
   * takes no writes (a standby the address still reaches after a switchover, a primary set
   * read-only), as libpq's `target_session_attrs=read-write` tells them, by
   * `transaction_read_only`; or `unreachable` within `timeoutMs` (docs/operations.md, "Database
   * failover"). Never throws. The default, 2 s, answers before the kubelet's probe timeout; a
   * late answer still returns its connection to the pool. A connection to a read-only server is
   * closed, not pooled, so the next one resolves the address again and can reach the primary.
   */
  async health(timeoutMs = PING_TIMEOUT_MS): Promise<DatabaseHealth> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'unreachable'>((resolve) => {
      timer = setTimeout(() => resolve('unreachable'), timeoutMs);
    });
    try {
      return await Promise.race([this.readWriteState(), late]);
    } catch {
      return 'unreachable';
    } finally {
      clearTimeout(timer);
    }
  }

  private readWriteState(): Promise<'writable' | 'read-only'> {
    return this.withClient(async (client, connection) => {
      try {
        const result = await client.query<{ transaction_read_only: string }>(
          'SHOW transaction_read_only',
        );
        if (result.rows[0]?.transaction_read_only === 'off') return 'writable';
        connection.discard(new Error('the database takes no writes'));
        return 'read-only';
      } catch (error) {
        connection.discard(error as Error);
        throw error;
      }
    });
  }

  async query<R extends QueryResultRow = Record<string, unknown>>(
    sql: string,
    params: unknown[] = [],
    name?: string,
  ): Promise<R[]> {
    const values = storableParams(params);
    const result = await this.pool.query<R>(
      name ? { name, text: sql, values } : { text: sql, values },
    );
    return result.rows;
  }

  /**
   * Runs `fn` in one transaction on one connection; rolls back on any error. While checked out,
   * a pg client has no `error` listener of the pool's, so a connection killed between two
   * statements (a Postgres restart) would be an unhandled `error` event and end the process;
   * here it fails this transaction instead, and the broken client is discarded, not reused. So
   * is one whose statement timed out: it still waits for that answer (pg sends nothing else on
   * it meanwhile, a ROLLBACK included, which would only time out too), and pg-pool ends a client
   * released with an error by destroying its socket.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.withClient(async (client, connection) => {
      const watched = <R>(statement: Promise<R>): Promise<R> =>
        statement.catch((error: unknown) => {
          // A read-only server's connection goes too: the next one can reach a primary the
          // address moved to (pool.query's connections go on any error).
          if (isStatementTimeout(error) || isReadOnly(error)) connection.discard(error as Error);
          throw error;
        });
      try {
        await watched(client.query('BEGIN'));
        const result = await fn(clientQueryable(client, watched));
        await watched(client.query('COMMIT'));
        return result;
      } catch (error) {
        if (!connection.broken) await client.query('ROLLBACK').catch(() => undefined);
        // A lost connection's own error ("terminating connection"), not pg's "not queryable" of
        // the statement after it: callers read what the database's state is from it (503).
        throw connection.broken ?? error;
      }
    });
  }

  /**
   * Runs `fn` on a checked-out client, then returns the client to the pool, or closes it when
   * it broke: its connection was lost (a checked-out client reports that only as an `error`
   * event on itself, so the event is watched while `fn` runs), or `fn` discarded it.
   *
   * The watch starts in pg-pool's callback, not after an `await`: the pool hands a freed client
   * to a waiting checkout while pg is still reading the answer that freed it, and a "terminating
   * connection" read in the same chunk (a Postgres restart) is emitted before any awaiting code
   * runs; with no listener on the client then, it ended the process
   * (test/foundation/store/checkout-error.test.ts).
   */
  private async withClient<T>(
    fn: (client: PoolClient, connection: CheckedOut) => Promise<T>,
  ): Promise<T> {
    const connection = new CheckedOut();
    const onError = (error: Error) => connection.discard(error);
    const client = await new Promise<PoolClient>((resolve, reject) => {
      this.pool.connect((error, checkedOut) => {
        if (error || !checkedOut) {
          reject(error ?? new Error('the pool gave no connection'));
          return;
        }
        checkedOut.on('error', onError);
        resolve(checkedOut);
      });
    });
    try {
      return await fn(client, connection);
    } finally {
      client.off('error', onError);
      client.release(connection.broken);
    }
  }
}

/** Whether a checked-out connection may go back to the pool: the first reason it may not. */
class CheckedOut {
  broken: Error | undefined;

  discard(reason: Error): void {
    this.broken ??= reason;
  }
}

function clientQueryable(
  client: PoolClient,
  watched: <R>(statement: Promise<R>) => Promise<R>,
): Queryable {
  return {
    async query<R extends QueryResultRow>(sql: string, params: unknown[] = [], name?: string) {
      const values = storableParams(params);
      const result = await watched(
        client.query<R>(name ? { name, text: sql, values } : { text: sql, values }),
      );
      return result.rows;
    },
  };
}

/**
 * JSON for a jsonb parameter: pg would send a JS array as a Postgres array, so always stringify.
 * U+0000, which jsonb refuses, is replaced in strings and keys (storable-text.ts).
 */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : storableJson(value);
}
