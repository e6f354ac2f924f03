import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

/** Postgres refuses to run as root; as root the server runs as this OS user. */
export const POSTGRES_OS_USER = 'postgres';

/** Why a local Postgres cannot start; its message is one line that says what to do. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

/** The OS user a Postgres server and its tools run as. */
export interface Ids {
  uid: number;
  gid: number;
}

/** A running postmaster this process started. */
export interface ServerProcess {
  pid: number;
  /** Resolves when the postmaster has exited. */
  exited: Promise<void>;
  /** A fast shutdown (SIGINT): open transactions are rolled back, then a checkpoint. */
  stop(): Promise<void>;
  /**
   * A crash: SIGKILL to the postmaster and every process it started, at once. Nothing is
   * flushed, no client is told; the kernel closes their sockets, as when the server's node dies.
   */
  crash(): Promise<void>;
}

const READY = /database system is ready to accept (read-only )?connections/;
const START_TIMEOUT_MS = 60_000;

/**
 * Who Postgres runs as: the unprivileged `postgres` OS user (created when missing) when this
 * process is root, which Postgres refuses to run as; undefined (this process's own user) otherwise.
 */
export function serverIds(): Ids | undefined {
  return userInfo().uid === 0 ? postgresIds() : undefined;
}

/**
 * `dataDir`, or a stable per-path place under the system tmp when the server's user cannot reach
 * it (as root, under a 0700 folder such as /root): `base` is then that place, to remove with the
 * cluster. The directory exists, owned by the server's user, mode 0700, as initdb and
 * pg_basebackup want it.
 */
export function ownedDataDir(
  dataDir: string,
  ids: Ids | undefined,
): { dataDir: string; base?: string } {
  let dir = dataDir;
  let base: string | undefined;
  mkdirSync(dirname(dir), { recursive: true });
  if (ids && !canReach(ids, dirname(dir))) {
    base = ownedTmpDir(`mcp-task-gateway-pgdata-${shortHash(dataDir)}`);
    dir = join(base, 'postgres');
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (ids) chownSync(dir, ids.uid, ids.gid);
  chmodSync(dir, 0o700);
  return { dataDir: dir, base };
}

/** Runs one Postgres tool (initdb, pg_basebackup) as the server's user; rejects unless it exits 0. */
export function runTool(
  binary: string,
  args: string[],
  ids: Ids | undefined,
  onLog: (line: string) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(binary, args, {
      ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      onLog(chunk.toString('utf8'));
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    child.once('error', (error) =>
      reject(failure(`cannot run ${binary}${asUser(ids)}`, error.message)),
    );
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(failure(`${binary} failed (exit ${code})`, output)),
    );
  });
}

/**
 * Starts `postgres -D dataDir -p port ...flags` as the server's user and resolves once it
 * accepts connections (read-only ones, for a standby). The owner's exit stops it (fast).
 */
export async function spawnServer(
  postgres: string,
  dataDir: string,
  port: number,
  flags: string[],
  ids: Ids | undefined,
  onLog: (line: string) => void,
): Promise<ServerProcess> {
  const child = spawn(postgres, ['-D', dataDir, '-p', String(port), ...flags], {
    ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
    cwd: '/',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
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
      reject(failure(`cannot run ${postgres}${asUser(ids)}`, error.message));
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      onLog(text);
      output += text;
      if (READY.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(failure('postgres exited at start', output));
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid!,
    exited,
    async stop() {
      process.off('exit', killOnExit);
      if (running()) {
        child.kill('SIGINT');
        await exited;
      }
    },
    async crash() {
      process.off('exit', killOnExit);
      if (!running()) return;
      const children = childPids(child.pid!);
      child.kill('SIGKILL');
      for (const pid of children) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await exited;
    },
  };
}

/** The processes whose parent is `pid` (a postmaster's backends and auxiliary processes). */
function childPids(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // stat: "pid (comm) state ppid ...": the comm may hold spaces, so split after its ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return pids;
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
export function canReach(ids: Ids, path: string): boolean {
  const probe = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', path], {
    uid: ids.uid,
    gid: ids.gid,
    cwd: '/',
    stdio: 'ignore',
  });
  return probe.status === 0;
}

/** A directory under the system tmp that root made (0755), or an error if someone else did. */
export function ownedTmpDir(name: string): string {
  const dir = join(tmpdir(), name);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  assertRootOwned(dir);
  return dir;
}

export function assertRootOwned(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new EmbeddedPostgresError(
      `${dir} exists but is not a directory that only root can write: remove it, or set DATABASE_URL`,
    );
  }
}

export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function asUser(ids: Ids | undefined): string {
  return ids ? ` as ${POSTGRES_OS_USER}` : '';
}

export function failure(what: string, output: string): EmbeddedPostgresError {
  const detail = output.trim().split('\n').slice(-3).join(' | ');
  return new EmbeddedPostgresError(
    `embedded Postgres: ${what}${detail ? ` (${detail})` : ''}; set DATABASE_URL to use another Postgres`,
  );
}
