import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * This process's worker ID: WORKER_ID when set (a StatefulSet pod name), else host-pid-random.
 * The random part matters: a restarted container often gets the same host name and PID 1, and
 * reusing a dead worker's ID would make its pinned rows look alive.
 */
export function resolveWorkerId(configured: string | undefined): string {
  if (configured) return configured;
  return `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
