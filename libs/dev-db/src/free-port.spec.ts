// Guards where freePort's ports come from: outside the range the kernel gives to outgoing
// connections, so a client cannot take one between freePort and the child's listen.
import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { freePort } from './free-port';

function ephemeralLow(): number {
  return Number(
    readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
  );
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('freePort', () => {
  it('returns ports below the ephemeral range that a listener can then bind', async () => {
    const low = ephemeralLow();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low);
    }
    const server = await listen(ports[0]);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
