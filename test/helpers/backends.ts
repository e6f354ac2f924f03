// Killing a process that talks to Postgres, and waiting out what it already sent. A statement
// sent just before SIGKILL still runs to its end (its backend notices the closed socket only
// when it answers), so a test that reads rows right after a kill can see them change once more.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Database } from '@app/persistence';
import { waitUntil } from './wait';

/**
 * The local ports of a Linux process's TCP sockets connected to `remotePort`, from /proc. Only
 * those: Linux hands the same ephemeral port to connections with different destinations, so a
 * port of the process's socket to an MCP server can be another client's port to Postgres (the
 * test's own pool once, on a loaded CI host).
 */
export function tcpPortsOf(pid: number, remotePort: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const port = (address: string): number => parseInt(address.split(':')[1], 16);
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    // Columns: sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9]) && port(cols[2]) === remotePort) {
        ports.add(port(cols[1]));
      }
    }
  }
  return ports;
}

/**
 * Kills `target` (its own `kill()`, a SIGKILL) and resolves once every Postgres backend it had
 * has exited, so that no statement of it runs any more. The process is stopped first (SIGSTOP)
 * so that it opens no connection between the reading of its sockets and the kill; a backend
 * started after that (another client on a reused port) is not waited for.
 */
export async function killAndDrain(
  target: { child: ChildProcess; kill(): Promise<void> },
  db: Database,
): Promise<void> {
  const pid = target.child.pid!;
  target.child.kill('SIGSTOP');
  const [{ stoppedAt, serverPort }] = await db.query<{
    stoppedAt: Date;
    serverPort: number | null;
  }>(`SELECT now() AS "stoppedAt", inet_server_port() AS "serverPort"`);
  if (serverPort === null) throw new Error('killAndDrain needs a TCP connection to Postgres');
  const ports = [...tcpPortsOf(pid, serverPort)];
  const [{ n: before }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE client_port = ANY($1::int[]) AND backend_start < $2`,
    [ports, stoppedAt],
  );
  // A process of the gateway always holds connections: none found means the ports were misread.
  if (before === 0) throw new Error(`no Postgres backend of process ${pid} found`);
  await target.kill();
  // What the backends still there are doing, for the timeout's message.
  let left: unknown[] = [];
  await waitUntil(
    async () => {
      left = await db.query(
        `SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) AS blocked_by,
                left(query, 160) AS query
           FROM pg_stat_activity WHERE client_port = ANY($1::int[]) AND backend_start < $2`,
        [ports, stoppedAt],
      );
      return left.length === 0 ? true : undefined;
    },
    () => `the backends of killed process ${pid} gone (left: ${JSON.stringify(left)})`,
  );
}
