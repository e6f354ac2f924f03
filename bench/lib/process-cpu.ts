import { existsSync } from 'node:fs';
import { Database } from '@app/persistence';
import { cpuSeconds } from './poller-harness';

/** CPU seconds per backend pid of one database, read from /proc (server on this machine). */
export type BackendCpu = Map<number, number>;

/**
 * The CPU the Postgres backends serving `db`'s database have used so far. Shared server
 * processes (WAL writer, checkpointer) are not counted; a backend that exits between two samples
 * loses its last interval (the benchmarks' pools keep theirs open).
 */
export async function postgresBackendCpu(db: Database): Promise<BackendCpu> {
  const rows = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
  );
  const cpu: BackendCpu = new Map();
  for (const { pid } of rows) {
    if (existsSync(`/proc/${pid}/stat`)) cpu.set(pid, cpuSeconds(pid));
  }
  return cpu;
}

/** CPU seconds the backends used between two samples (new backends count from zero). */
export function backendCpuDelta(before: BackendCpu, after: BackendCpu): number {
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

/** CPU seconds of each pid now (0 for one that has exited). */
export function cpuOf(pids: readonly number[]): number[] {
  return pids.map((pid) => (existsSync(`/proc/${pid}/stat`) ? cpuSeconds(pid) : 0));
}
