// Guards against a 2026-07-28 request missing its envelope or headers, and against failures
// mapped to the wrong maybeSent (which decides whether a submit may be repeated).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerConfig } from '@app/config';
import { encodeHeaderValue } from '@app/wire';
import { StatelessHttpClient } from './stateless-http.client';
import { retryAfterMs } from '../transport/retry-after';
import { classifyConnectFailure } from '../failure.classifier';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamTimeoutError,
} from '../upstream.errors';
import { httpServerConfig } from '../testing/server-config.fixture';

interface Seen {
  headers: IncomingMessage['headers'];
  body: { id: number; method: string; params: Record<string, unknown> };
}

type Reply = (seen: Seen, res: ServerResponse) => void;

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

describe('StatelessHttpClient', () => {
  let server: Server;
  let url: string;
  let reply: Reply;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        const entry = { headers: req.headers, body: JSON.parse(text) as Seen['body'] };
        seen.push(entry);
        reply(entry, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    seen.length = 0;
  });

  const client = (overrides: Partial<ServerConfig> = {}): StatelessHttpClient =>
    new StatelessHttpClient(
      httpServerConfig({ url, headers: { authorization: 'Bearer k' }, ...overrides }),
      quiet,
    );

  const json =
    (value: unknown, status = 200): Reply =>
    (_seen, res) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };

  it('sends the _meta envelope, the capabilities and the three headers', async () => {
    reply = (s, res) =>
      json({ jsonrpc: '2.0', id: s.body.id, result: { resultType: 'complete' } })(s, res);
    const result = await client().request(
      'tasks/get',
      { taskId: 'tk-1' },
      { idempotent: true, name: 'tk-1' },
    );
    expect(result).toEqual({ resultType: 'complete' });
    const [{ headers, body }] = seen;
    expect(headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(headers['mcp-method']).toBe('tasks/get');
    expect(headers['mcp-name']).toBe('tk-1');
    expect(headers.authorization).toBe('Bearer k');
    expect(body.method).toBe('tasks/get');
    expect(body.params).toEqual({
      taskId: 'tk-1',
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'mcp-task-gateway', version: '0.1.0' },
        'io.modelcontextprotocol/clientCapabilities': {
          elicitation: { form: {} },
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
      },
    });
  });

  it('encodes a header value that is not plain ASCII, or looks like the sentinel', () => {
    expect(encodeHeaderValue('plain_tool')).toBe('plain_tool');
    expect(encodeHeaderValue('café')).toBe(`=?base64?${Buffer.from('café').toString('base64')}?=`);
    expect(encodeHeaderValue('=?base64?x?=')).toMatch(/^=\?base64\?[A-Za-z0-9+/=]+\?=$/);
  });

  it('reads the response with its id from an SSE answer', async () => {
    reply = (s, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n`);
      res.end(`event: message\ndata: {"jsonrpc":"2.0","id":${s.body.id},"result":{"ok":1}}\n\n`);
    };
    await expect(client().request('tools/call', {}, { idempotent: false })).resolves.toEqual({
      ok: 1,
    });
  });

  it("hands the request's own progress notifications to onProgress, with a token only then", async () => {
    const progress = (token: unknown, value: number, extra = '') =>
      `data: {"jsonrpc":"2.0","method":"notifications/progress","params":` +
      `{"progressToken":${JSON.stringify(token)},"progress":${value}${extra}}}\n\n`;
    reply = (s, res) => {
      const token = (s.body.params._meta as Record<string, unknown>).progressToken ?? null;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(progress(token, 1, ',"total":4,"message":"one"'));
      res.write(progress('someone-else', 2));
      res.write(progress(token, 3));
      res.end(`data: {"jsonrpc":"2.0","id":${s.body.id},"result":{"ok":1}}\n\n`);
    };
    const seenProgress: unknown[] = [];
    const result = await client().request(
      'tools/call',
      {},
      { idempotent: false, onProgress: (update) => seenProgress.push(update) },
    );
    expect(result).toEqual({ ok: 1 });
    expect(seenProgress).toEqual([{ progress: 1, total: 4, message: 'one' }, { progress: 3 }]);
    expect(seen[0].body.params._meta).toMatchObject({ progressToken: seen[0].body.id });
    await client().request('tools/call', {}, { idempotent: false });
    expect(seen[1].body.params._meta).not.toHaveProperty('progressToken');
  });

  it('answers once the response came, though the server keeps its SSE stream open', async () => {
    let closed: Promise<void> = Promise.resolve();
    reply = (s, res) => {
      closed = new Promise((resolve) => res.on('close', resolve));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","id":${s.body.id},"result":{"ok":2}}\n\n`);
    };
    // The deadline is far: an answer that waited for the stream's end would time out instead.
    const answer = client().request('tasks/get', {}, { idempotent: true, timeoutMs: 60_000 });
    await expect(answer).resolves.toEqual({ ok: 2 });
    await closed; // and the stream left open is let go of
  });

  it('keeps the connection when the server ends its SSE stream just after the response', async () => {
    let closedFirst: Promise<boolean> = Promise.resolve(true);
    reply = (s, res) => {
      // Which comes first on the server: the connection closed by the client, or the answer's end.
      closedFirst = new Promise((resolve) => {
        res.socket?.once('close', () => resolve(true));
        res.once('finish', () => resolve(false));
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: {"jsonrpc":"2.0","id":${s.body.id},"result":{"ok":4}}\n\n`);
      setTimeout(() => res.end(), 50);
    };
    await expect(client().request('tasks/get', {}, { idempotent: true })).resolves.toEqual({
      ok: 4,
    });
    expect(await closedFirst).toBe(false);
  });

  it('reads SSE events split anywhere across chunks, the last without its blank line', async () => {
    reply = (s, res) => {
      const note = `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}`;
      const response = `data: {"jsonrpc":"2.0",\ndata: "id":${s.body.id},"result":{"ok":3}}`;
      const whole = Buffer.from(`${note}\n\n${note}\r\n\r\n${note}\n\n${response}`);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // A byte at a time, each its own chunk: every blank line is split.
      const write = (at: number): void => {
        if (at >= whole.length) return void res.end();
        res.write(whole.subarray(at, at + 1), () => setImmediate(() => write(at + 1)));
      };
      write(0);
    };
    await expect(client().request('tasks/get', {}, { idempotent: true })).resolves.toEqual({
      ok: 3,
    });
  });

  it('a JSON-RPC error, even with HTTP 400, is an UpstreamRpcError with its code', async () => {
    reply = (s, res) =>
      json(
        { jsonrpc: '2.0', id: s.body.id, error: { code: -32602, message: 'Task not found' } },
        400,
      )(s, res);
    const error = await client()
      .request('tasks/get', { taskId: 'x' }, { idempotent: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamRpcError);
    expect(error).toMatchObject({ code: -32602, maybeSent: true });
  });

  it('an HTTP 4xx without JSON-RPC was not processed; a 5xx may have been', async () => {
    reply = (_s, res) => res.writeHead(404).end('no');
    const refused = await client()
      .request('x', {}, { idempotent: true })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UpstreamHttpError);
    expect(refused).toMatchObject({ status: 404, maybeSent: false });
    reply = (_s, res) => res.writeHead(502).end('bad gateway');
    const failed = await client()
      .request('x', {}, { idempotent: true })
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 502, maybeSent: true });
  });

  it("a proxy's HTML error page is the HTTP error it carries, with its Retry-After", async () => {
    // A load balancer in front of the server, during a deploy or under a rate limit: its page is
    // not the server breaking the protocol, and must not fail a task as protocol_error.
    const page = '<html><head><meta http-equiv="Content-Type" content="text/html"></head></html>';
    reply = (_s, res) =>
      res.writeHead(503, { 'content-type': 'text/html', 'retry-after': '7' }).end(page);
    const unavailable = await client()
      .request('tasks/get', { taskId: 'x' }, { idempotent: true })
      .catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(UpstreamHttpError);
    expect(unavailable).toMatchObject({ status: 503, maybeSent: true, retryAfterMs: 7000 });
    expect(classifyConnectFailure(unavailable).permanent).toBe(false);
    reply = (_s, res) => res.writeHead(429, { 'content-type': 'text/html' }).end(page);
    const limited = await client()
      .request('tools/call', {}, { idempotent: false })
      .catch((e: unknown) => e);
    expect(limited).toMatchObject({ status: 429, maybeSent: false, retryAfterMs: undefined });
    // A web page answered with success is still no MCP endpoint.
    reply = (_s, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(page);
    const web = await client()
      .request('tasks/get', {}, { idempotent: true })
      .catch((e: unknown) => e);
    expect(web).toBeInstanceOf(UpstreamProtocolError);
    expect(classifyConnectFailure(web).permanent).toBe(true);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-12-05T10:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 5 ', now)).toBe(5000);
    expect(retryAfterMs('Sat, 05 Dec 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sat, 05 Dec 2026 09:59:00 GMT', now)).toBeUndefined();
    expect(retryAfterMs('0', now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });

  it('no answer within the deadline is an UpstreamTimeoutError', async () => {
    reply = () => undefined; // never answers
    const started = Date.now();
    const error = await client()
      .request('tools/call', {}, { idempotent: false, timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("the caller's abort wins over the deadline, with the caller's reason", async () => {
    reply = () => undefined;
    const controller = new AbortController();
    const pending = client().request(
      'tools/call',
      {},
      { idempotent: false, signal: controller.signal },
    );
    const reason = new Error('lease lost');
    setImmediate(() => controller.abort(reason));
    await expect(pending).rejects.toBe(reason);
  });

  it('a refused connection was provably not sent', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const error = await client({ url: `http://127.0.0.1:${port}/mcp` })
      .request('tools/call', {}, { idempotent: false })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect(error).toMatchObject({ maybeSent: false });
  });
});
