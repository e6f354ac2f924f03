import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DemoContext } from './demo-context.interface';
import { HttpSessionRegistry } from './http-session.registry';
import { McpHttpHandler, sendJsonRpcError } from './mcp-http.handler';

/** Big results are the point of result_size, but an unbounded body read is a memory bug. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

const HTML_PAGE =
  '<!doctype html><html><head><title>Not MCP</title></head>' +
  '<body><h1>Welcome</h1><p>This endpoint is a web page, not an MCP server.</p></body></html>';

class BodyError extends Error {}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new BodyError('request body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    throw new BodyError('Parse error: request body is not JSON');
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

/** Served as `--strict-2026` serves /mcp, whatever the mode (none with --only-2025). */
export const STRICT_PATH = '/mcp-2026';

/**
 * One plain node:http server for the MCP endpoints and the test admin endpoints. node:http
 * rather than express keeps the demo free of framework behaviour the tests would then depend on.
 */
export async function startHttpServer(context: DemoContext): Promise<RunningHttpServer> {
  const { options } = context;
  const sessions = new HttpSessionRegistry();
  const mcp = new McpHttpHandler(context, sessions);

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/healthz' && req.method === 'GET') return sendJson(res, 200, { status: 'ok' });
    if (path === '/admin/forget-sessions' && req.method === 'POST') {
      return sendJson(res, 200, { forgotten: await sessions.forgetAll() });
    }
    if (path === '/admin/add-tool' && req.method === 'POST') {
      context.extraToolAdded = true;
      sessions.addExtraToolEverywhere();
      return sendJson(res, 200, { added: 'demo_extra' });
    }
    const sse = options.transport === 'sse' && (path === '/sse' || path === '/messages');
    // The strict 2026-07-28 endpoint beside /mcp (docs/demo-server.md, "Strict and 2025-only
    // modes").
    const strict = path === STRICT_PATH && options.transport === 'http' && !options.only2025;
    if (path !== '/mcp' && !sse && !strict) {
      return sendJson(res, 404, { error: `no route for ${path}` });
    }
    if (options.html) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end(HTML_PAGE);
    }
    if (
      options.requireAuth !== undefined &&
      req.headers.authorization !== `Bearer ${options.requireAuth}`
    ) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      return void res.end(JSON.stringify({ error: 'unauthorized' }));
    }
    if (path === '/sse' && req.method === 'GET') return mcp.sseStream(res);
    const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
    if (path === '/messages' && req.method === 'POST') return mcp.ssePost(req, res, body);
    if (path === '/mcp') return mcp.streamable(req, res, body);
    if (strict) return mcp.strict(req, res, body);
    return sendJson(res, 405, { error: `${req.method} not allowed on ${path}` });
  };

  const server: Server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof BodyError) return sendJsonRpcError(res, 400, -32700, error.message);
      process.stderr.write(`demo-server: request failed: ${String(error)}\n`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${options.host}:${port}`;
  return {
    url,
    close: async () => {
      await sessions.forgetAll();
      context.listen2026?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
