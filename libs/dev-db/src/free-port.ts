import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port handed out when nothing in the kernel's ephemeral range is used. */
const FLOOR = 20_000;
/** The low end of Linux's default ephemeral range, for a system that does not say its own. */
const DEFAULT_EPHEMERAL_LOW = 32_768;
const ATTEMPTS = 50;

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, for a process started next to listen on.
 *
 * The port comes from below the kernel's ephemeral range (ip_local_port_range), from FLOOR up:
 * the kernel gives ephemeral ports to every outgoing connection (a Postgres client, a fetch),
 * so a port taken from that range and released can be the source port of some connection by
 * the time the child binds it, which fails its listen with EADDRINUSE (seen on a busy 2-core
 * machine: the chaos run's demo server). Below the range only another explicit listener can
 * take it. When the range leaves no room below it, the kernel picks, as before.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = ephemeralRangeLow();
  if (ephemeralLow - FLOOR >= 1_000) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const candidate = FLOOR + randomInt(ephemeralLow - FLOOR);
      if ((await listenOnce(candidate)) !== undefined) return candidate;
    }
  }
  const picked = await listenOnce(0);
  if (picked === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return picked;
}

/** The low end of the kernel's ephemeral port range, from /proc where there is one. */
function ephemeralRangeLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // Not Linux, or /proc is not mounted: assume the default.
  }
  return DEFAULT_EPHEMERAL_LOW;
}

/** Listens on `port` (0: any) and closes again; the port it had, or undefined if it was taken. */
function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') resolvePort(undefined);
      else reject(error);
    });
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolvePort(bound));
    });
  });
}
