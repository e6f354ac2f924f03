import { Agent, get } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { startMetricsServer } from './metrics-server';

describe('startMetricsServer', () => {
  it('closes while clients hold connections open: one with no request, one kept alive', async () => {
    const server = await startMetricsServer(new Registry(), 0, {}, { host: '127.0.0.1' });
    // A connection that never sends a request: Node's own server.close() would wait for it.
    const silent = connect(server.port, '127.0.0.1');
    silent.on('error', () => undefined);
    await new Promise<void>((done) => silent.once('connect', () => done()));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        get(`http://127.0.0.1:${server.port}/metrics`, { agent }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode));
        }).once('error', reject);
      });
      expect(status).toBe(200);
      // Bounded, so a close that waits for its clients fails here instead of hanging.
      const timer = new AbortController();
      const closed = await Promise.race([
        server.close().then(() => true),
        delay(5_000, false, { signal: timer.signal }).catch(() => false),
      ]);
      timer.abort();
      expect(closed).toBe(true);
    } finally {
      agent.destroy();
      silent.destroy();
    }
  });
});
