import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Postgres refuses to run as root; as root the server runs as this OS user. */
export const POSTGRES_OS_USER = 'postgres';

/** Why the embedded Postgres cannot start; its message is one line that says what to do. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

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

interface Ids {
  uid: number;
  gid: number;
}

const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;

/**
 * Runs the embedded Postgres as root: initdb and postgres run as the `postgres` OS user, which
 * must be able to reach the binaries and the data. Under a private (0700) folder such as /root it
 * cannot, so the binaries (with their shared libraries and share files: they find each other by
 * relative path) are copied once per version to `$TMPDIR/mcp-task-gateway-postgres-<version>/`,
 * and the cluster lives in `$TMPDIR/mcp-task-gateway-pgdata-<hash of dataDir>/postgres`, a stable
 * per-project place that survives restarts as `.data/postgres` does. Both are created by root
 * and checked to be root's own (never a directory someone else planted in the shared tmp).
 */
export async function startRootCluster(
  binaries: { initdb: string; postgres: string },
  options: RootClusterOptions,
): Promise<RootCluster> {
  const ids = postgresIds();
  const native = dirname(dirname(binaries.postgres));
  const binRoot = canReach(ids, binaries.initdb) ? native : copyBinaries(native);
  const initdb = join(binRoot, 'bin', 'initdb');
  const postgres = join(binRoot, 'bin', 'postgres');
  let dataDir = options.dataDir;
  let relocatedBase: string | undefined;
  mkdirSync(dirname(dataDir), { recursive: true });
  if (!canReach(ids, dirname(dataDir))) {
    relocatedBase = ownedTmpDir(`mcp-task-gateway-pgdata-${shortHash(options.dataDir)}`);
    dataDir = join(relocatedBase, 'postgres');
    options.onRelocated?.(dataDir);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chownSync(dataDir, ids.uid, ids.gid);
  chmodSync(dataDir, 0o700);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await initCluster(initdb, dataDir, ids, options);
  }
  const child = spawn(
    postgres,
    ['-D', dataDir, '-p', String(options.port), ...options.postgresFlags],
    { uid: ids.uid, gid: ids.gid, cwd: '/', stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  // Last resort if the owner dies without stopping it: a fast shutdown, not an orphan.
  const killOnExit = (): void => void child.kill('SIGINT');
  process.once('exit', killOnExit);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(failure('postgres did not become ready', output)),
      START_TIMEOUT_MS,
    );
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(failure(`cannot run ${postgres} as ${POSTGRES_OS_USER}`, error.message));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      options.onLog(text);
      output += text;
      if (output.includes(READY)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(failure('postgres exited at start', output));
    });
  });
  return {
    dataDir,
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        await exited;
      }
      if (options.ephemeral) rmSync(relocatedBase ?? dataDir, { recursive: true, force: true });
    },
  };
}

async function initCluster(
  initdb: string,
  dataDir: string,
  ids: Ids,
  options: RootClusterOptions,
): Promise<void> {
  // Beside the data directory: root may write there and the postgres user can reach it.
  const pwfile = join(dirname(dataDir), `.pwfile-${process.pid}`);
  writeFileSync(pwfile, `${options.password}\n`, { mode: 0o600 });
  chownSync(pwfile, ids.uid, ids.gid);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        initdb,
        [
          `--pgdata=${dataDir}`,
          '--auth=scram-sha-256',
          `--username=${options.user}`,
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--no-locale',
        ],
        { uid: ids.uid, gid: ids.gid, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      const collect = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        options.onLog(chunk.toString('utf8'));
      };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      child.once('error', (error) =>
        reject(failure(`cannot run ${initdb} as ${POSTGRES_OS_USER}`, error.message)),
      );
      child.once('close', (code) =>
        code === 0 ? resolve() : reject(failure(`initdb failed (exit ${code})`, output)),
      );
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** uid and gid of the postgres OS user, created (as the package did) when it is missing. */
function postgresIds(): Ids {
  let ids = lookupIds();
  if (!ids) {
    spawnSync('groupadd', ['--system', POSTGRES_OS_USER], { stdio: 'ignore' });
    spawnSync('useradd', ['--system', '-g', POSTGRES_OS_USER, POSTGRES_OS_USER], {
      stdio: 'ignore',
    });
    ids = lookupIds();
  }
  if (!ids) {
    throw new EmbeddedPostgresError(
      `Postgres cannot run as root and there is no "${POSTGRES_OS_USER}" OS user (creating one ` +
        'failed): create it (useradd --system postgres), run as another user, or set DATABASE_URL',
    );
  }
  return ids;
}

function lookupIds(): Ids | undefined {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === POSTGRES_OS_USER) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/**
 * Whether the postgres user can use `path`: search permission on every directory above it, and
 * execute (a binary) or search (a directory) permission on it.
 */
function canReach(ids: Ids, path: string): boolean {
  const probe = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', path], {
    uid: ids.uid,
    gid: ids.gid,
    cwd: '/',
    stdio: 'ignore',
  });
  return probe.status === 0;
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

/** A directory under the system tmp that root made (0755), or an error if someone else did. */
function ownedTmpDir(name: string): string {
  const dir = join(tmpdir(), name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  assertRootOwned(dir);
  return dir;
}

function assertRootOwned(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(
      `${dir} exists but is not a directory that only root can write: remove it, or set DATABASE_URL`,
    );
  }
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function failure(what: string, output: string): EmbeddedPostgresError {
  const detail = output.trim().split('\n').slice(-3).join(' | ');
  return new EmbeddedPostgresError(
    `embedded Postgres: ${what}${detail ? ` (${detail})` : ''}; set DATABASE_URL to use another Postgres`,
  );
}
