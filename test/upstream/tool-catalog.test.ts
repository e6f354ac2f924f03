// Guards connections.md requirement 14: a server's tool list is read across every nextCursor
// page, and re-read when the server sends notifications/tools/list_changed, so the catalog
// neither misses tools on later pages nor keeps a stale list.
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import {
  adminPost,
  closePools,
  demoHttp,
  fakeMcpEndpoint,
  openPool,
  waitForState,
} from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

const tool = (name: string) => ({ name, inputSchema: { type: 'object', properties: {} } });

it('reads every page of tools/list', async () => {
  const pages: Record<string, { tools: unknown[]; nextCursor?: string }> = {
    '': { tools: [tool('first')], nextCursor: 'page-2' },
    'page-2': { tools: [tool('second'), tool('third')], nextCursor: 'page-3' },
    'page-3': { tools: [tool('fourth')] },
  };
  const paged = await fakeMcpEndpoint(({ id, method, params }) => {
    if (method === 'initialize') {
      return {
        status: 200,
        body: {
          jsonrpc: '2.0',
          id,
          result: {
            protocolVersion: '2025-11-25',
            capabilities: { tools: {} },
            serverInfo: { name: 'paged', version: '1.0.0' },
          },
        },
      };
    }
    if (method === 'tools/list') {
      const cursor = params?.cursor;
      const page = pages[typeof cursor === 'string' ? cursor : ''];
      return { status: 200, body: { jsonrpc: '2.0', id, result: page } };
    }
    return {
      status: 200,
      body: { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } },
    };
  });
  const { pool } = openPool([demoHttp('paged', paged.url, { protocolVersion: '2025-11-25' })]);
  const status = await waitForState(pool, 'paged', 'ready');
  expect(status.tools?.map((t) => t.name)).toEqual(['first', 'second', 'third', 'fourth']);
});

it('re-reads the tool list when the server says it changed', async () => {
  const demo = await startDemoServer();
  const { pool } = openPool([demoHttp('demo', demo.url)]);
  const seen: string[][] = [];
  pool.onToolsChanged((status) => seen.push((status.tools ?? []).map((t) => t.name)));
  const ready = await waitForState(pool, 'demo', 'ready');
  expect(ready.tools?.map((t) => t.name)).not.toContain('demo_extra');
  await adminPost(demo.url, '/admin/add-tool');
  await waitUntil(
    () => (pool.status('demo').tools?.some((t) => t.name === 'demo_extra') ? true : undefined),
    'the catalog to list demo_extra',
  );
  expect(seen.at(-1)).toContain('demo_extra');
});
