import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  assertRootOwned,
  canReach,
  EmbeddedPostgresError,
  Ids,
  ownedDataDir,
  runTool,
  serverIds,
  shortHash,
  spawnServer,
} from './server-process';

export { EmbeddedPostgresError };

export interface RootClusterOptions {
  /** Where the caller wants the cluster (used when the postgres user can reach it). */
  dataDir: string;
  port: number;
  user: string;
  password: string;
  postgresFlags: string[];
  /** Remove the cluster on stop (test runs). */
  ephemeral: boolean;
  onLog: (line: string) => void;
  /** Told where the cluster really lives when it had to move out of `dataDir`. */
  onRelocated?: (dataDir: string) => void;
}

export interface RootCluster {
  /** The data directory actually used. */
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Runs the embedded Postgres as root: initdb and postgres run as the `postgres` OS user, which
 * must be able to reach the binaries and the data (server-process.ts). Under a private (0700)
 * folder such as /root it cannot, so the binaries (with their shared libraries and share files:
 * they find each other by relative path) are copied once per version to
 * `$TMPDIR/mcp-task-gateway-postgres-<version>/`, and the cluster lives in
 * `$TMPDIR/mcp-task-gateway-pgdata-<hash of dataDir>/postgres`, a stable per-project place that
 * survives restarts as `.data/postgres` does. Both are created by root and checked to be root's
 * own (never a directory someone else planted in the shared tmp).
 */
export async function startRootCluster(
  binaries: { initdb: string; postgres: string },
  options: RootClusterOptions,
): Promise<RootCluster> {
  const ids = serverIds()!;
  const native = dirname(dirname(binaries.postgres));
  const binRoot = canReach(ids, binaries.initdb) ? native : copyBinaries(native);
  const initdb = join(binRoot, 'bin', 'initdb');
  const postgres = join(binRoot, 'bin', 'postgres');
  const { dataDir, base } = ownedDataDir(options.dataDir, ids);
  if (base) options.onRelocated?.(dataDir);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await initCluster(initdb, dataDir, ids, options);
  }
  const server = await spawnServer(
    postgres,
    dataDir,
    options.port,
    options.postgresFlags,
    ids,
    options.onLog,
  );
  return {
    dataDir,
    async stop() {
      await server.stop();
      if (options.ephemeral) rmSync(base ?? dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * initdb with a password-protected superuser `user` (scram-sha-256 for every connection,
 * replication included), UTF-8 and no locale; as the server's user when `ids` is given.
 */
export async function initCluster(
  initdb: string,
  dataDir: string,
  ids: Ids | undefined,
  options: Pick<RootClusterOptions, 'user' | 'password' | 'onLog'> & {
    /** Skip initdb's final fsync: for a throwaway cluster that runs with fsync=off anyway. */
    noSync?: boolean;
  },
): Promise<void> {
  // Beside the data directory: root may write there and the postgres user can reach it.
  const pwfile = join(dirname(dataDir), `.pwfile-${process.pid}`);
  writeFileSync(pwfile, `${options.password}\n`, { mode: 0o600 });
  if (ids) chownSync(pwfile, ids.uid, ids.gid);
  try {
    await runTool(
      initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        `--username=${options.user}`,
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--no-locale',
        ...(options.noSync ? ['--no-sync'] : []),
      ],
      ids,
      options.onLog,
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** Copies the package's native tree (bin, lib, share) once per version; reused afterwards. */
function copyBinaries(native: string): string {
  const version = packageVersion(native);
  const target = join(tmpdir(), `mcp-task-gateway-postgres-${version}`);
  if (existsSync(join(target, 'bin', 'postgres'))) {
    assertRootOwned(target);
    return target;
  }
  const staging = `${target}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
  chmodSync(staging, 0o755);
  try {
    renameSync(staging, target);
  } catch (error) {
    // Another process finished the same copy first: use theirs.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(target, 'bin', 'postgres'))) throw error;
  }
  assertRootOwned(target);
  return target;
}

function packageVersion(native: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as {
      version?: string;
    };
    return (pkg.version ?? 'unknown').replace(/[^A-Za-z0-9._-]/g, '_');
  } catch {
    return shortHash(native);
  }
}
