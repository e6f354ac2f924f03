// Guards against a Streamable HTTP server that forgot our session: idempotent requests recover
// once, others are never replayed, and the 404 to one request does not fail the others in flight
// on that session as possibly sent (docs/connections.md, requirement 7).
import { UpstreamSessionExpiredError, type UpstreamSession } from '@app/upstream';
import { startHttpProxy, type ProxyAnswer } from '../helpers/http-proxy';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { adminPost, closePools, demoHttp, openPool } from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

async function syncCalls(session: UpstreamSession, tag: string): Promise<unknown> {
  const stats = await session.callTool('demo_stats', { tag }, { idempotent: true });
  return (stats.structuredContent as { by_tag: Record<string, unknown> }).by_tag[tag];
}

describe('Streamable HTTP session expiry', () => {
  it('re-initializes once and retries an idempotent request after a 404', async () => {
    const demo = await startDemoServer();
    const { pool, recorder } = openPool([demoHttp('demo', demo.url)]);
    const session = await pool.session('demo');
    const before = session.sessionId;
    expect(before).toBeDefined();
    expect(await adminPost(demo.url, '/admin/forget-sessions')).toEqual({ forgotten: 1 });

    const listed = (await session.request('tools/list', {}, { idempotent: true })) as {
      tools: unknown[];
    };
    expect(listed.tools.length).toBeGreaterThan(0);
    expect(session.sessionId).toBeDefined();
    expect(session.sessionId).not.toBe(before);
    expect(recorder.reconnects).toEqual([{ server: 'demo', reason: 'session_expired' }]);
    expect(pool.status('demo').state).toBe('ready');
  });

  it('does not replay a non-idempotent call after a 404', async () => {
    const demo = await startDemoServer();
    const { pool } = openPool([demoHttp('demo', demo.url)]);
    const session = await pool.session('demo');
    await adminPost(demo.url, '/admin/forget-sessions');

    const error = await session
      .callTool('demo_slow', { duration_ms: 10, tag: 'once' }, { idempotent: false })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamSessionExpiredError);
    expect((error as UpstreamSessionExpiredError).maybeSent).toBe(false);

    // The server never ran it, and the pool did not send it again on the new session.
    const fresh = await pool.session('demo');
    expect(await syncCalls(fresh, 'once')).toBeUndefined();
    await fresh.callTool('demo_slow', { duration_ms: 10, tag: 'once' }, { idempotent: false });
    expect(await syncCalls(fresh, 'once')).toMatchObject({ submits: 1 });
  });
});

/** What a Streamable HTTP server answers a request on a session it does not know. */
const SESSION_NOT_FOUND: ProxyAnswer = {
  status: 404,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32001, message: 'Session not found' },
  }),
};

describe('a 404 to one request while another is in flight on the session', () => {
  // A server that forgot the session (a restart, an expiry) answers each request on it 404 in
  // its own exchange; one still being answered ends with its result. Before, the first 404
  // closed the connection and failed the other request locally as possibly sent: a submit beside
  // it ended `outcome_uncertain` though the server never saw it (a chaos run's a-native tasks).
  const cases = [
    ['pooled', 'a 404 too', SESSION_NOT_FOUND],
    ['task', 'a 404 too', SESSION_NOT_FOUND],
    ['pooled', 'its result', 'through'],
    ['task', 'its result', 'through'],
  ] as const;
  it.each(cases)(
    'on the %s session, the other request gets its own answer: %s',
    async (kind, _label, last) => {
      // A server of one era only: nothing to fall back on.
      const demo = await startDemoServer(['--only-2025']);
      let release: ((answer: ProxyAnswer) => void) | undefined;
      const proxy = await startHttpProxy(new URL(demo.url), ({ req, method, params }) => {
        const tag = (params?.arguments as { tag?: unknown } | undefined)?.tag;
        if (method !== 'tools/call' || req.headers['mcp-session-id'] === undefined)
          return 'through';
        if (tag === 'held') return new Promise<ProxyAnswer>((resolve) => (release = resolve));
        return tag === 'forgotten' ? SESSION_NOT_FOUND : 'through';
      });
      try {
        const { pool } = openPool([demoHttp('demo', proxy.url(''))]);
        const session =
          kind === 'pooled' ? await pool.session('demo') : await pool.taskSession('demo');
        const first = session.sessionId;
        const held = session
          .callTool('demo_slow', { duration_ms: 10, tag: 'held' }, { idempotent: false })
          .then(
            () => 'answered',
            (error: unknown) => error,
          );
        const releaseHeld = await waitUntil(() => release, 'the held call at the proxy');
        const expired = await session
          .callTool('demo_slow', { duration_ms: 10, tag: 'forgotten' }, { idempotent: false })
          .catch((error: unknown) => error);
        expect(expired).toBeInstanceOf(UpstreamSessionExpiredError);

        releaseHeld(last);
        const outcome = await held;
        if (last === 'through') {
          expect(outcome).toBe('answered');
        } else {
          expect(outcome).toBeInstanceOf(UpstreamSessionExpiredError);
          expect((outcome as UpstreamSessionExpiredError).maybeSent).toBe(false);
        }
        // The session was replaced all the same: the next call goes on a new one.
        const next =
          kind === 'pooled' ? await pool.session('demo') : await pool.taskSession('demo');
        await next.callTool('demo_slow', { duration_ms: 10, tag: 'after' }, { idempotent: false });
        expect(next.sessionId).toBeDefined();
        expect(next.sessionId).not.toBe(first);
      } finally {
        await proxy.close();
      }
    },
  );
});

describe('a task session the server forgot along with the pooled one', () => {
  // A restarted server forgets every session. The pooled one meets the 404 first (its keepalive
  // or next call) and is replaced; before, the task session stayed until a submit on it was
  // answered 404 and had to wait out a retry (a chaos run: 21 s after an upstream restart).
  it('is found by a ping when the pooled session is replaced, before a submit meets it', async () => {
    const demo = await startDemoServer(['--only-2025']);
    const { pool, recorder } = openPool([demoHttp('demo', demo.url)]);
    const stale = (await pool.taskSession('demo')).sessionId;
    expect(stale).toBeDefined();
    expect(await adminPost(demo.url, '/admin/forget-sessions')).toEqual({ forgotten: 2 });

    await (await pool.session('demo')).request('tools/list', {}, { idempotent: true });
    expect(recorder.reconnects).toEqual([{ server: 'demo', reason: 'session_expired' }]);

    // No request went on the task session: only the supervisor's check can have replaced it.
    const fresh = await waitUntil(async () => {
      const session = await pool.taskSession('demo');
      return session.sessionId !== stale ? session : undefined;
    }, 'a new task session');
    await fresh.callTool('demo_slow', { duration_ms: 10, tag: 'first' }, { idempotent: false });
    expect(await syncCalls(await pool.session('demo'), 'first')).toMatchObject({ submits: 1 });
  });

  it('is kept when the ping goes unanswered: tasks may still be bound to it', async () => {
    const demo = await startDemoServer(['--only-2025']);
    const ids: { task?: string; pooled?: string } = {};
    const held: Array<(answer: ProxyAnswer) => void> = [];
    const proxy = await startHttpProxy(new URL(demo.url), ({ req, method }) => {
      const id = req.headers['mcp-session-id'];
      // The pooled session alone is forgotten; the ping on the task session gets no answer in
      // time (an error status would be requirement 6's own check of the session).
      if (method === 'tools/list' && id === ids.pooled) return SESSION_NOT_FOUND;
      if (method === 'ping' && id === ids.task) {
        return new Promise<ProxyAnswer>((resolve) => held.push(resolve));
      }
      return 'through';
    });
    try {
      // The ping's deadline, min(callTimeoutMs, connectTimeoutMs): short, yet long enough for
      // every other request of the test on a loaded machine.
      const { pool, recorder } = openPool([
        demoHttp('demo', proxy.url(''), { callTimeoutMs: 2000 }),
      ]);
      const task = await pool.taskSession('demo');
      ids.task = task.sessionId;
      ids.pooled = (await pool.session('demo')).sessionId;
      await (await pool.session('demo')).request('tools/list', {}, { idempotent: true });
      expect(recorder.reconnects).toEqual([{ server: 'demo', reason: 'session_expired' }]);

      await waitUntil(
        () =>
          recorder.logs.find(
            (line) => line.msg === 'upstream task session check failed; the session is kept',
          ),
        'the task session check',
      );
      const same = await pool.taskSession('demo');
      expect(same.sessionId).toBe(ids.task);
      await same.callTool('demo_slow', { duration_ms: 10, tag: 'kept' }, { idempotent: false });
      expect(await syncCalls(await pool.session('demo'), 'kept')).toMatchObject({ submits: 1 });
    } finally {
      for (const release of held) release('through');
      await proxy.close();
    }
  });
});
