import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { UpstreamLogger } from '../upstream.hooks';

interface GroupRecord {
  pgid: number;
  /** /proc start time of the leader: tells a live leader from a reused pid. */
  startTime?: string;
  ownerPid: number;
  ownerStartTime?: string;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks); undefined off Linux or when gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: split after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** True while any process is still in the group (signal 0 checks without sending anything). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The default registry directory: one per host and OS user, not per worker. A restarted poller
 * gets a fresh random WORKER_ID, so a directory keyed by worker would never be found again; the
 * owner check below is what keeps workers sharing it from touching each other's children.
 */
export function defaultProcessGroupDir(): string {
  return join(tmpdir(), `mcp-task-gateway-stdio-groups-${userInfo().uid}`);
}

/**
 * Records the process groups of stdio children in a directory under the OS temp dir, so a worker
 * restarted after a crash (SIGKILL, OOM) can end the children its predecessor left: detached
 * children outlive their parent by design. A record is reaped only when its owner is gone, so two
 * workers sharing a directory never kill each other's children.
 */
export class ProcessGroupRegistry {
  readonly dir: string;

  constructor(
    private readonly logger: UpstreamLogger,
    dir = defaultProcessGroupDir(),
  ) {
    this.dir = dir;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  add(pgid: number): void {
    const record: GroupRecord = {
      pgid,
      startTime: processStartTime(pgid),
      ownerPid: process.pid,
      ownerStartTime: processStartTime(process.pid),
    };
    writeFileSync(join(this.dir, `${pgid}.json`), JSON.stringify(record));
  }

  remove(pgid: number): void {
    rmSync(join(this.dir, `${pgid}.json`), { force: true });
  }

  /** Kills the leftover groups of dead owners; returns the pgids it signalled. */
  reapOrphans(): number[] {
    const reaped: number[] = [];
    for (const file of readdirSync(this.dir).filter((name) => name.endsWith('.json'))) {
      const path = join(this.dir, file);
      let record: GroupRecord;
      try {
        record = JSON.parse(readFileSync(path, 'utf8')) as GroupRecord;
      } catch {
        rmSync(path, { force: true });
        continue;
      }
      if (this.ownerAlive(record)) continue;
      if (this.stillOurs(record)) {
        try {
          process.kill(-record.pgid, 'SIGKILL');
          reaped.push(record.pgid);
          this.logger.warn({ pgid: record.pgid }, 'reaped a stdio server left by a crashed worker');
        } catch {
          // Gone in the meantime: nothing to reap.
        }
      }
      rmSync(path, { force: true });
    }
    return reaped;
  }

  private ownerAlive(record: GroupRecord): boolean {
    const start = processStartTime(record.ownerPid);
    if (start !== undefined) return start === record.ownerStartTime;
    try {
      process.kill(record.ownerPid, 0);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The leader alive with the recorded start time, or the leader gone but members left: Linux
   * never hands out a pid that is still some group's id, so such members are the original group's.
   */
  private stillOurs(record: GroupRecord): boolean {
    if (!groupAlive(record.pgid)) return false;
    const start = processStartTime(record.pgid);
    return start === undefined || record.startTime === undefined || start === record.startTime;
  }
}
