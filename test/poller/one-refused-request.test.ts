// Guards docs/connections.md, requirement 6: on a 2025-11-25 session behind a proxy, an HTTP
// error status answered to one request (a proxy's 502 page, a rate limiter's 429) is that
// request's failure only. The other requests in flight on the session go on to their answers,
// and the session is kept: no new `initialize` (before, the session was torn down and every
// call in flight on it failed as possibly sent). A session the server no longer knows is still
// replaced when it says so with a 400 instead of a 404.
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates, waitToolsetsAvailable } from '../helpers/fleet-tasks';
import {
  startHttpProxy,
  type HttpProxy,
  type ProxiedRequest,
  type ProxyAnswer,
} from '../helpers/http-proxy';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

const TERMINAL = ['completed', 'failed', 'cancelled'];
const BAD_GATEWAY_PAGE = '<html><head><title>502 Bad Gateway</title></head></html>';

/** The refusal the proxy gives the first `tools/call` tagged `refusedTag`; then it lets it by. */
let refusal: ProxyAnswer = 'through';
let refusedTag: string | undefined;
let refusedAt = 0;
/** The session the last request went on, and one the proxy answers 400 as if it were unknown. */
let lastSession: string | undefined;
let forgottenSession: string | undefined;
/** The tags of the calls the proxy has seen (demo_stats speaks 2026-07-28, which this server does not). */
const calledTags = new Set<string>();
let proxy: HttpProxy;

function refuseTaggedCallOnce({ req, method, params }: ProxiedRequest): ProxyAnswer {
  const session = req.headers['mcp-session-id'];
  if (typeof session === 'string') {
    if (session === forgottenSession) {
      return { status: 400, headers: { 'content-type': 'text/plain' }, body: 'Bad Request' };
    }
    lastSession = session;
  }
  const tag = (params?.arguments as { tag?: unknown } | undefined)?.tag;
  if (method === 'tools/call' && typeof tag === 'string') calledTags.add(tag);
  if (method !== 'tools/call' || refusedTag === undefined || tag !== refusedTag) return 'through';
  refusedTag = undefined;
  refusedAt = Date.now();
  return refusal;
}

beforeAll(async () => {
  // A server of that era only: no 2026-07-28 wire to fall back on.
  const demo = await fleet.demo(['--only-2025']);
  proxy = await startHttpProxy(new URL(demo.url), refuseTaggedCallOnce);
  await fleet.poller(
    {
      session: {
        url: proxy.url('/mcp'),
        protocolVersion: '2025-11-25',
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        taskToolsets: [
          { name: 'held', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 30_000 },
        ],
      },
    },
    { env: { LEASE_MS: '10000' } },
  );
  await waitToolsetsAvailable(fleet.db, 1);
}, 60_000);

afterAll(async () => {
  await proxy.close();
});

const CASES: Array<[string, ProxyAnswer, { status: string; error_code: string | null }]> = [
  [
    "a proxy's 502 page",
    { status: 502, headers: { 'content-type': 'text/html' }, body: BAD_GATEWAY_PAGE },
    // A 5xx may have been processed: a sync-call without retryOnCrash is not sent again.
    { status: 'failed', error_code: 'outcome_uncertain' },
  ],
  [
    'a 429',
    { status: 429, headers: { 'content-type': 'text/plain' }, body: 'Too Many Requests' },
    // A 4xx was not processed: the call is made again after a backoff, and completes.
    { status: 'completed', error_code: null },
  ],
];

it.each(CASES)(
  '%s on one call leaves the call in flight beside it, and the session',
  async (_name, answer, refusedEnd) => {
    const tag = `-${answer === 'through' ? 0 : answer.status}`;
    const [held] = await insertFleetTasks(fleet.db, [
      {
        toolset: 'held',
        contract: 'sync-call',
        server: 'session',
        input: { duration_ms: 6000, tag: `held${tag}` },
      },
    ]);
    await waitUntil(
      () => calledTags.has(`held${tag}`) || undefined,
      'the held call sent through the proxy',
    );
    const sessions = proxy.methods.filter((method) => method === 'initialize').length;
    refusal = answer;
    refusedTag = `refused${tag}`;
    const [refused] = await insertFleetTasks(fleet.db, [
      {
        toolset: 'held',
        contract: 'sync-call',
        server: 'session',
        input: { duration_ms: 100, tag: `refused${tag}` },
      },
    ]);
    const ended = await waitUntil(async () => {
      const states = await taskStates(fleet.db, [held, refused]);
      return [...states.values()].every((s) => TERMINAL.includes(s.status)) ? states : undefined;
    }, 'both tasks ended');
    expect(refusedTag).toBeUndefined(); // the proxy did refuse the call
    // ...while the held call was in flight beside it.
    expect(ended.get(held)!.completed_at!.getTime()).toBeGreaterThan(refusedAt);
    expect(ended.get(refused)).toMatchObject(refusedEnd);
    expect(ended.get(held)).toMatchObject({ status: 'completed', error_code: null });
    expect(proxy.methods.filter((method) => method === 'initialize').length).toBe(sessions);
  },
);

it('a session the server answers 400 for, as if it did not know it, is still replaced', async () => {
  // Some servers answer an unknown session 400 instead of 404: one request's status alone does
  // not end the session, but the ping that follows it fails the same way, and that does.
  const sessions = proxy.methods.filter((method) => method === 'initialize').length;
  expect(lastSession).toBeDefined();
  forgottenSession = lastSession;
  const [id] = await insertFleetTasks(fleet.db, [
    {
      toolset: 'held',
      contract: 'sync-call',
      server: 'session',
      input: { duration_ms: 100, tag: 'after-forgotten' },
    },
  ]);
  const ended = await waitUntil(async () => {
    const state = (await taskStates(fleet.db, [id])).get(id);
    return state && TERMINAL.includes(state.status) ? state : undefined;
  }, 'the task ended');
  expect(ended).toMatchObject({ status: 'completed', error_code: null });
  expect(proxy.methods.filter((method) => method === 'initialize').length).toBe(sessions + 1);
  expect(lastSession).not.toBe(forgottenSession);
});
