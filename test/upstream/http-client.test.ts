// Guards against an upstream HTTP request that bypasses the gateway's HTTP client
// (docs/connections.md, "The HTTP client"). The pool once built its 2026-07-28 client on Node's
// `fetch` while the docs said every request went through the gateway's own client: its answers
// then still failed after five silent minutes whatever the call's deadline. Requests pass through
// a recording proxy on loopback, which tells the two clients apart by a header `fetch` always
// sends (`sec-fetch-mode`, the Fetch standard's request mode) and the gateway's client never does.
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { closePools, demoHttp, nativeToolset, openPool, ordinaryToolset } from './mcp-test.helper';

afterEach(closePools);
useProcesses({ perTest: true });

interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
}

const proxies: Server[] = [];
afterEach(async () => {
  await Promise.all(
    proxies.splice(0).map((proxy) => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(resolve));
    }),
  );
});

/** A loopback proxy to `target` that records each request's method and headers. */
async function recordingProxy(target: string): Promise<{ url: string; seen: Seen[] }> {
  const to = new URL(target);
  const seen: Seen[] = [];
  const proxy = createServer((req, res) => {
    seen.push({ method: req.method ?? '', headers: req.headers });
    const forward = request(
      { host: to.hostname, port: to.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  proxies.push(proxy);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, seen };
}

it("the proxy tells Node's fetch apart (the check below can fail)", async () => {
  const demo = await startDemoServer(['--strict-2026']);
  const proxy = await recordingProxy(demo.url);
  const response = await fetch(`${proxy.url}/mcp`, { method: 'GET' });
  await response.body?.cancel();
  expect(proxy.seen.map((s) => s.headers['sec-fetch-mode'])).toEqual(['cors']);
});

it('every request to a server of either era goes through the gateway HTTP client', async () => {
  const [strict, legacy] = await Promise.all([
    startDemoServer(['--strict-2026']),
    startDemoServer(['--only-2025']),
  ]);
  const [toStrict, toLegacy] = await Promise.all([
    recordingProxy(strict.url),
    recordingProxy(legacy.url),
  ]);
  const { pool } = openPool([
    demoHttp('strict', toStrict.url, { toolsets: [nativeToolset('strict')] }),
    demoHttp('legacy', toLegacy.url, { toolsets: [ordinaryToolset('legacy')] }),
  ]);
  for (const name of ['strict', 'legacy']) {
    await waitUntil(
      () => (pool.status(name).state === 'ready' ? true : undefined),
      `${name} to be ready`,
      10_000,
    );
  }
  // A tool call on each side: the 2026-07-28 client's and the 2025-11-25 session's.
  const echoed = await pool
    .statelessSession('strict')
    .request(
      'tools/call',
      { name: 'demo_echo', arguments: { text: 'strict' } },
      { name: 'demo_echo', timeoutMs: 5000, idempotent: false },
    );
  expect(JSON.stringify(echoed)).toContain('strict');
  const session = await pool.session('legacy');
  const options = { timeoutMs: 5000, idempotent: false };
  const called = await session.callTool('demo_echo', { text: 'legacy' }, options);
  expect(JSON.stringify(called.content)).toContain('legacy');

  // The 2026-07-28 requests carry Mcp-Method; the 2025-11-25 ones an MCP session.
  expect(toStrict.seen.some((s) => s.headers['mcp-method'] === 'tools/call')).toBe(true);
  expect(toLegacy.seen.some((s) => s.headers['mcp-session-id'] !== undefined)).toBe(true);
  for (const { seen } of [toStrict, toLegacy]) {
    expect(seen.filter((s) => s.headers['sec-fetch-mode'] !== undefined)).toEqual([]);
  }
});
