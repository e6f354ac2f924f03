// Guards docs/connections.md ("MCP 2026-07-28", the answers) and docs/leases.md ("Scheduling
// after an attempt"): a strict 2026-07-28 server behind a proxy that answers its polls with an
// error page keeps its tasks working, retried with backoff (not failed as protocol_error), and a
// 429 with Retry-After puts the next attempt no sooner than asked.
import { createServer, request as forward, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, waitToolsetsAvailable } from '../helpers/fleet-tasks';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

/** What the proxy answers to `tasks/get`; every other request goes through. */
let polls: 'through' | 'bad-gateway-page' | 'rate-limited' = 'through';
let proxy: Server;

/** nginx's page for a 502, as a load balancer sends it while the server behind restarts. */
const BAD_GATEWAY_PAGE = `<html>
<head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>
</html>`;

const RETRY_AFTER_S = 30;
const TERMINAL = ['completed', 'failed', 'cancelled'];

beforeAll(async () => {
  // --strict-2026 refuses initialize: every request is the stateless client's.
  const strict = await fleet.demo(['--strict-2026']);
  const target = new URL(`${strict.url}/mcp`);
  proxy = createServer((req, res) => {
    if (req.headers['mcp-method'] === 'tasks/get' && polls === 'bad-gateway-page') {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/html' }).end(BAD_GATEWAY_PAGE);
      return;
    }
    if (req.headers['mcp-method'] === 'tasks/get' && polls === 'rate-limited') {
      req.resume();
      res
        .writeHead(429, { 'content-type': 'text/plain', 'retry-after': String(RETRY_AFTER_S) })
        .end('Too Many Requests');
      return;
    }
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  await fleet.poller(
    {
      strict: {
        url: `http://127.0.0.1:${port}/mcp`,
        protocolVersion: '2026-07-28',
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        taskToolsets: [{ name: 'pp-native', contract: 'mcp-tasks', tool: 'demo_task_required' }],
      },
    },
    // mcp-tasks submits chain two connects and two calls (docs/leases.md, "Attempt deadlines");
    // a backoff ceiling above the Retry-After the proxy asks for.
    { env: { LEASE_MS: '10000', MAX_BACKOFF_MS: '60000' } },
  );
  await waitToolsetsAvailable(fleet.db, 1);
}, 60_000);

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
});

interface Row {
  status: string;
  error_code: string | null;
  last_error: string | null;
  consecutive_errors: number;
  /** next_attempt_at − updated_at, in seconds: the delay the last write set. */
  delay_s: number | null;
}

async function row(id: string): Promise<Row> {
  const [found] = await fleet.db.query<Row>(
    `SELECT status, error_code, last_error, consecutive_errors,
            extract(epoch FROM next_attempt_at - updated_at)::float8 AS delay_s
       FROM task_rows WHERE id = $1`,
    [id],
  );
  return found;
}

function submit(tag: string): Promise<string[]> {
  return insertFleetTasks(fleet.db, [
    {
      toolset: 'pp-native',
      contract: 'mcp-tasks',
      server: 'strict',
      input: { duration_ms: 300, tag },
    },
  ]);
}

it("a proxy's 502 page on the polls keeps the task working until the server is back", async () => {
  polls = 'bad-gateway-page';
  const [id] = await submit('bad-gateway');
  const during = await waitUntil(async () => {
    const r = await row(id);
    return r.consecutive_errors >= 2 || TERMINAL.includes(r.status) ? r : undefined;
  }, 'two polls answered by the error page');
  expect(during).toMatchObject({ status: 'working', error_code: null });
  expect(during.last_error).toContain('HTTP 502');
  polls = 'through';
  const after = await waitUntil(async () => {
    const r = await row(id);
    return TERMINAL.includes(r.status) ? r : undefined;
  }, 'the task ended after the proxy let its polls through');
  expect(after).toMatchObject({ status: 'completed', error_code: null });
});

it('a 429 with Retry-After puts the next poll no sooner than asked', async () => {
  polls = 'rate-limited';
  const [id] = await submit('rate-limited');
  const limited = await waitUntil(async () => {
    const r = await row(id);
    return r.last_error !== null || TERMINAL.includes(r.status) ? r : undefined;
  }, 'a poll answered 429');
  expect(limited.status).toBe('working');
  expect(limited.last_error).toContain('HTTP 429');
  expect(limited.delay_s).toBeGreaterThanOrEqual(RETRY_AFTER_S);
  expect(limited.delay_s).toBeLessThanOrEqual(RETRY_AFTER_S * 1.2 + 1);
  polls = 'through';
});
