// Guards docs/connections.md ("MCP 2026-07-28", the answers) and docs/leases.md ("Scheduling
// after an attempt"): a server behind a proxy that answers its polls with an error page keeps its
// tasks working, retried with backoff (never failed as protocol_error), and a 429 with
// Retry-After puts the next attempt no sooner than asked; a strict 2026-07-28 server, and one of
// 2025-11-25 only (a session, the SDK's transport).
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, waitToolsetsAvailable } from '../helpers/fleet-tasks';
import { startHttpProxy, type HttpProxy, type ProxyAnswer } from '../helpers/http-proxy';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

/** What the proxies answer to `tasks/get`; every other request goes through. */
let polls: 'through' | 'bad-gateway-page' | 'rate-limited' = 'through';
const proxies: HttpProxy[] = [];

/** nginx's page for a 502, as a load balancer sends it while the server behind restarts. */
const BAD_GATEWAY_PAGE = `<html>
<head><title>502 Bad Gateway</title></head>
<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body>
</html>`;

const RETRY_AFTER_S = 30;
const TERMINAL = ['completed', 'failed', 'cancelled'];

/** A poll (`tasks/get`, of either era) answered as `polls` says; everything else goes through. */
function answerPolls({ method }: { method?: string }): ProxyAnswer {
  if (method !== 'tasks/get' || polls === 'through') return 'through';
  if (polls === 'bad-gateway-page') {
    return { status: 502, headers: { 'content-type': 'text/html' }, body: BAD_GATEWAY_PAGE };
  }
  return {
    status: 429,
    headers: { 'content-type': 'text/plain', 'retry-after': String(RETRY_AFTER_S) },
    body: 'Too Many Requests',
  };
}

beforeAll(async () => {
  // --strict-2026 refuses initialize: every request is the stateless client's.
  const strict = await fleet.demo(['--strict-2026']);
  // --only-2025 speaks 2025-11-25 alone; the poller is pinned to it too (a session).
  const legacy = await fleet.demo(['--only-2025']);
  proxies.push(await startHttpProxy(new URL(strict.url), answerPolls));
  proxies.push(await startHttpProxy(new URL(legacy.url), answerPolls));
  const timeouts = { connectTimeoutMs: 1000, callTimeoutMs: 1900 };
  await fleet.poller(
    {
      strict: {
        url: proxies[0].url('/mcp'),
        protocolVersion: '2026-07-28',
        ...timeouts,
        taskToolsets: [{ name: 'pp-2026', contract: 'mcp-tasks', tool: 'demo_task_required' }],
      },
      session: {
        url: proxies[1].url('/mcp'),
        protocolVersion: '2025-11-25',
        ...timeouts,
        taskToolsets: [{ name: 'pp-2025', contract: 'mcp-tasks', tool: 'demo_task_required' }],
      },
    },
    // mcp-tasks submits chain two connects and two calls (docs/leases.md, "Attempt deadlines");
    // a backoff ceiling above the Retry-After the proxy asks for.
    { env: { LEASE_MS: '10000', MAX_BACKOFF_MS: '60000' } },
  );
  await waitToolsetsAvailable(fleet.db, 2);
}, 60_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
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

const ERAS = [
  ['2026-07-28, a strict server', 'pp-2026', 'strict'],
  ['2025-11-25, a session', 'pp-2025', 'session'],
] as const;

function submit(toolset: string, server: string, tag: string): Promise<string[]> {
  return insertFleetTasks(fleet.db, [
    { toolset, contract: 'mcp-tasks', server, input: { duration_ms: 300, tag } },
  ]);
}

it.each(ERAS)(
  "%s: a proxy's 502 page on the polls keeps the task working until it passes",
  async (_era, toolset, server) => {
    polls = 'bad-gateway-page';
    const [id] = await submit(toolset, server, `bad-gateway-${toolset}`);
    const during = await waitUntil(async () => {
      const r = await row(id);
      return r.consecutive_errors >= 2 || TERMINAL.includes(r.status) ? r : undefined;
    }, 'two polls answered by the error page');
    expect(during).toMatchObject({ status: 'working', error_code: null });
    // The SDK's words on the session side quote the page ("502 Bad Gateway").
    expect(during.last_error).toContain('502');
    polls = 'through';
    const after = await waitUntil(async () => {
      const r = await row(id);
      return TERMINAL.includes(r.status) ? r : undefined;
    }, 'the task ended after the proxy let its polls through');
    expect(after).toMatchObject({ status: 'completed', error_code: null });
  },
);

it.each(ERAS)(
  '%s: a 429 with Retry-After puts the next poll no sooner than asked',
  async (_era, toolset, server) => {
    polls = 'rate-limited';
    const [id] = await submit(toolset, server, `rate-limited-${toolset}`);
    const limited = await waitUntil(async () => {
      const r = await row(id);
      return r.last_error !== null || TERMINAL.includes(r.status) ? r : undefined;
    }, 'a poll answered 429');
    expect(limited.status).toBe('working');
    expect(limited.last_error).toContain('HTTP 429');
    expect(limited.delay_s).toBeGreaterThanOrEqual(RETRY_AFTER_S);
    expect(limited.delay_s).toBeLessThanOrEqual(RETRY_AFTER_S * 1.2 + 1);
    polls = 'through';
  },
);
