// Guards connections.md requirement 12: ordinary and sync-call traffic of one worker shares one
// pooled session per server; calls, concurrent or one after another, never open a session each.
import { closePools, demoHttp, fakeMcpEndpoint, openPool, RpcMessage } from './mcp-test.helper';

afterEach(async () => {
  await closePools();
});

function answer({ id, method, params }: RpcMessage): { status: number; body: unknown } {
  const result =
    method === 'initialize'
      ? {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'counting', version: '1.0.0' },
        }
      : method === 'tools/list'
        ? { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: {} } }] }
        : method === 'tools/call'
          ? { content: [{ type: 'text', text: JSON.stringify(params?.arguments ?? {}) }] }
          : undefined;
  return result
    ? { status: 200, body: { jsonrpc: '2.0', id, result } }
    : {
        status: 200,
        body: { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } },
      };
}

it('forty calls, concurrent and sequential, share one initialized session', async () => {
  const endpoint = await fakeMcpEndpoint(answer);
  const { pool } = openPool([
    demoHttp('counting', endpoint.url, { protocolVersion: '2025-11-25', maxConcurrentCalls: 8 }),
  ]);
  const call = async (n: number) =>
    (await pool.session('counting')).callTool('echo', { n }, { idempotent: true });
  await Promise.all(Array.from({ length: 20 }, (_, n) => call(n)));
  for (let n = 20; n < 40; n++) await call(n);
  expect(endpoint.initializes()).toBe(1);
});
