// Guards against a Streamable HTTP server that forgot our session: idempotent requests recover once, others are never replayed.
import { UpstreamSessionExpiredError, type UpstreamSession } from '@app/upstream';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
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
