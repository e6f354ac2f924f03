/**
 * The launcher's guardian (`npm start`): a small process that outlives the launcher only to end
 * what the launcher started when the launcher could not. A SIGKILL (an IDE's stop button, the
 * OOM killer) runs no handler of the launcher's, and its children lead sessions of their own
 * (child-process.ts says why), so a closed terminal does not reach them either: without this,
 * the API, the poller, the demo server and the embedded Postgres kept running and kept their
 * ports.
 *
 * The launcher starts it first and tells it on its stdin, one JSON line each, the children it
 * starts (`{"child": pid}`) and the embedded cluster's data directory (`{"postgres": dir}`). The
 * pipe closes when the launcher ends, however it ends. Then, for whatever is still running, the
 * guardian does what the launcher's own shutdown does: SIGTERM to each child's process group
 * (each drains as on Ctrl-C), SIGKILL after the same 40 s, then a fast shutdown of Postgres
 * (SIGINT to the postmaster named in `postmaster.pid`) once no child can still be using it. A
 * launcher that stopped everything itself leaves nothing running, and the guardian just exits.
 *
 * A registered process is recognised by its start time (/proc), so a PID reused meanwhile by an
 * unrelated process is never signalled.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const CHILD_GRACE_MS = 40_000;
const POSTGRES_GRACE_MS = 20_000;
const POLL_MS = 100;

interface Watched {
  pid: number;
  /** Its start time (field 22 of /proc/<pid>/stat), null where /proc is missing. */
  started: string | null;
}

const children: Watched[] = [];
const clusters: string[] = [];

// The guardian stops on its own schedule: a signal meant for the launcher's terminal is not for it.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);

createInterface({ input: process.stdin })
  .on('line', (line) => register(line))
  .on('close', () => {
    void cleanUp().then(() => process.exit(0));
  });

function register(line: string): void {
  let message: { child?: unknown; postgres?: unknown };
  try {
    message = JSON.parse(line) as typeof message;
  } catch {
    return;
  }
  if (typeof message.child === 'number') {
    children.push({ pid: message.child, started: startTime(message.child) });
  }
  if (typeof message.postgres === 'string') clusters.push(message.postgres);
}

async function cleanUp(): Promise<void> {
  const running = children.filter(alive);
  if (running.length > 0) {
    log(`the launcher is gone: stopping ${running.length} process(es) it started`);
    for (const child of running) signalGroup(child.pid, 'SIGTERM');
    if (!(await gone(running, CHILD_GRACE_MS))) {
      for (const child of running.filter(alive)) signalGroup(child.pid, 'SIGKILL');
      await gone(running, 5_000);
    }
  }
  for (const dir of clusters) {
    const postmaster = postmasterOf(dir);
    if (!postmaster || !alive(postmaster)) continue;
    log('the launcher is gone: stopping the embedded Postgres');
    // SIGINT is Postgres' fast shutdown: clients are disconnected, the cluster is left clean.
    process.kill(postmaster.pid, 'SIGINT');
    if (!(await gone([postmaster], POSTGRES_GRACE_MS))) process.kill(postmaster.pid, 'SIGKILL');
  }
}

/** The running postmaster of a data directory (the first line of its `postmaster.pid`). */
function postmasterOf(dir: string): Watched | null {
  const file = join(dir, 'postmaster.pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? { pid, started: startTime(pid) } : null;
}

/** Fields 3 and on of /proc/<pid>/stat (state first), or null where there is none. */
function procStat(pid: number): string[] | null {
  try {
    // The command name (field 2) may hold spaces and parentheses: count fields after its ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function startTime(pid: number): string | null {
  return procStat(pid)?.[19] ?? null;
}

/** Running, and still the process registered (a zombie is not running: it holds no port). */
function alive(watched: Watched): boolean {
  try {
    process.kill(watched.pid, 0);
  } catch {
    return false;
  }
  const stat = procStat(watched.pid);
  if (stat === null) return watched.started === null;
  return stat[0] !== 'Z' && (watched.started === null || stat[19] === watched.started);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Each child leads its own process group (child-process.ts): the group takes what it spawned.
    process.kill(-pid, signal);
  } catch {
    // Gone meanwhile.
  }
}

async function gone(watched: Watched[], withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (watched.some(alive)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

function log(line: string): void {
  process.stdout.write(`[start] ${line}\n`);
}
