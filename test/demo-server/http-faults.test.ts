// Guards the server-wide fault switches and HTTP extras that the connection layer's tests rely on.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitUntil } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import {
  call,
  connectHttp,
  connectStdio,
  firstText,
  useDemoProcesses,
} from './demo-process.helper';

useDemoProcesses();

const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};
const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

function postMcp(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...mcpHeaders, ...headers },
    body: JSON.stringify(body),
  });
}

describe('server-wide faults', () => {
  it('--no-ping answers ping with -32601 over stdio (env switch) and HTTP', async () => {
    const { client } = await connectStdio([], { DEMO_NO_PING: '1' });
    await expect(client.ping()).rejects.toMatchObject({ code: -32601 });
    const demo = await startDemoServer(['--no-ping']);
    await expect((await connectHttp(demo.url)).ping()).rejects.toMatchObject({ code: -32601 });
    const plain = await startDemoServer();
    await expect((await connectHttp(plain.url)).ping()).resolves.toEqual({});
  });

  it('--html answers every MCP request with a 200 HTML page', async () => {
    const demo = await startDemoServer(['--html']);
    const response = await postMcp(demo.url, initializeBody);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(await response.text()).toContain('<html>');
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
  });

  it('--require-auth answers 401 without the bearer token', async () => {
    const demo = await startDemoServer(['--require-auth', 's3cret']);
    const response = await postMcp(demo.url, initializeBody);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const client = await connectHttp(demo.url, { Authorization: 'Bearer s3cret' });
    expect(firstText(await call(client, 'demo_echo', { text: 'in' }))).toBe('in');
  });

  it('--forget-sessions answers 404 to the next request after an answered one', async () => {
    const demo = await startDemoServer(['--forget-sessions']);
    const client = await connectHttp(demo.url);
    expect(firstText(await call(client, 'demo_echo', { text: 'once' }))).toBe('once');
    await expect(call(client, 'demo_echo', { text: 'twice' })).rejects.toMatchObject({ code: 404 });
  });

  it('POST /admin/forget-sessions makes old session ids answer 404', async () => {
    const demo = await startDemoServer();
    const first = await postMcp(demo.url, initializeBody);
    const sessionId = first.headers.get('mcp-session-id');
    expect(sessionId).toBeTruthy();
    await first.text();
    const forgot = await fetch(`${demo.url}/admin/forget-sessions`, { method: 'POST' });
    expect(await forgot.json()).toEqual({ forgotten: 1 });
    const after = await postMcp(
      demo.url,
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { 'mcp-session-id': sessionId! },
    );
    expect(after.status).toBe(404);
  });

  it('--drop-after-initialize completes the handshake, then loses the connection', async () => {
    const demo = await startDemoServer(['--drop-after-initialize']);
    const client = await connectHttp(demo.url);
    await expect(client.listTools()).rejects.toThrow();
    const stdio = await connectStdio(['--drop-after-initialize']);
    const closed = new Promise<void>((resolve) => (stdio.client.onclose = resolve));
    await expect(stdio.client.listTools()).rejects.toThrow();
    await closed;
  });

  it('--slow-initialize-ms delays the initialize answer', async () => {
    const demo = await startDemoServer(['--slow-initialize-ms', '400']);
    const started = Date.now();
    await connectHttp(demo.url);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
  });
});

describe('HTTP extras', () => {
  it('--json-response answers a session POST with one JSON body; an SDK client still works', async () => {
    const demo = await startDemoServer(['--json-response']);
    const init = await postMcp(demo.url, initializeBody);
    expect(init.headers.get('content-type')).toMatch(/^application\/json/);
    expect(
      ((await init.json()) as { result?: { protocolVersion?: string } }).result?.protocolVersion,
    ).toBe('2025-11-25');
    const client = await connectHttp(demo.url);
    const submitted = await call(client, 'demo_submit', { duration_ms: 0 });
    const { task_id } = submitted.structuredContent as { task_id: string };
    const status = await call(client, 'demo_status', { task_id });
    expect(status.structuredContent).toMatchObject({ task_id, status: 'completed' });
  });

  it('POST /admin/add-tool adds demo_extra and notifies connected sessions', async () => {
    const demo = await startDemoServer();
    const client = await connectHttp(demo.url);
    let notified = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified = true;
    });
    // Repeat the add until the notification arrives: the client opens its GET stream asynchronously.
    await waitUntil(async () => {
      await fetch(`${demo.url}/admin/add-tool`, { method: 'POST' });
      return notified ? true : undefined;
    }, 'tools/list_changed');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('demo_extra');
  });

  it('serves legacy SSE at /sse with --transport sse', async () => {
    const demo = await startDemoServer(['--transport', 'sse']);
    const client = new Client({ name: 'sse-test', version: '1' });
    await client.connect(new SSEClientTransport(new URL(`${demo.url}/sse`)));
    try {
      expect(firstText(await call(client, 'demo_echo', { text: 'legacy' }))).toBe('legacy');
    } finally {
      await client.close();
    }
  });

  it('streamable transport still works with a fresh Client per attempt', async () => {
    const demo = await startDemoServer();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const client = new Client({ name: 'again', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${demo.url}/mcp`)));
      expect(firstText(await call(client, 'demo_echo', { text: `${attempt}` }))).toBe(`${attempt}`);
      await client.close();
    }
  });
});
