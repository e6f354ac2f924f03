import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { DemoContext } from './demo-context.interface';
import { createDemoServer } from './demo-server.factory';
import type { HttpSession, HttpSessionRegistry } from './http-session.registry';
import { Mcp2026Handler } from './mcp-2026/mcp-2026.handler';
import { isStatelessRequest, PROTOCOL_2026 } from '@app/wire';
import { tapTransport } from './message-tap.middleware';

function messages(body: unknown): JSONRPCMessage[] {
  return (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
}
const hasRequest = (body: unknown): boolean =>
  messages(body).some((m) => 'method' in m && 'id' in m);
const hasInitialized = (body: unknown): boolean =>
  messages(body).some((m) => 'method' in m && m.method === 'notifications/initialized');

export function sendJsonRpcError(
  res: ServerResponse,
  http: number,
  code: number,
  message: string,
): void {
  res.writeHead(http, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** The SDK's own answer to an unknown session: clients treat 404 as "session expired". */
const sessionNotFound = (res: ServerResponse): void =>
  sendJsonRpcError(res, 404, -32001, 'Session not found');

/**
 * Streamable HTTP and legacy SSE on top of the shared session map, plus the HTTP-level faults
 * that need the socket (drop-after-initialize) or the request boundary (forget-sessions).
 * One endpoint serves both protocol eras: a POST without a session that carries the 2026-07-28
 * markers goes to the stateless 2026 handler; everything else takes the SDK's 2025-11-25 path.
 */
export class McpHttpHandler {
  private readonly stateless: Mcp2026Handler;

  constructor(
    private readonly context: DemoContext,
    private readonly sessions: HttpSessionRegistry,
  ) {
    this.stateless = new Mcp2026Handler(context);
  }

  async streamable(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.context.options.strict2026) return this.strict(req, res, body);
    const sessionId = req.headers['mcp-session-id'];
    const speaks2026 = !this.context.options.only2025;
    if (
      speaks2026 &&
      sessionId === undefined &&
      req.method === 'POST' &&
      isStatelessRequest(req.headers, body)
    ) {
      return this.stateless.handle(req, res, body);
    }
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) return sessionNotFound(res);
      if (req.method === 'POST' && this.dropsHere(session, body)) return void req.socket.destroy();
      if (req.method === 'POST' && this.context.options.forgetSessions && hasRequest(body)) {
        // "After each answered request": forget once this response is fully written.
        res.once('close', () => void this.sessions.forgetAll());
      }
      const transport = session.transport as StreamableHTTPServerTransport;
      return transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !messages(body).some((m) => isInitializeRequest(m))) {
      return sendJsonRpcError(res, 400, -32000, 'Bad Request: No valid session ID provided');
    }
    const server = createDemoServer(this.context);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // An upstream may answer a POST with plain JSON (no progress or requests mid-call); the
      // benchmarks use it to measure the gateway's cost without an SSE parse per call.
      enableJsonResponse: this.context.options.jsonResponse,
      onsessioninitialized: (id): void =>
        this.sessions.add({ id, server, transport, initialized: false }),
    });
    transport.onclose = () => this.sessions.remove(transport.sessionId);
    await server.connect(transport);
    tapTransport(transport, this.context);
    await transport.handleRequest(req, res, body);
  }

  /**
   * --strict-2026, and /mcp-2026 in any mode: only the stateless side exists. A POST without
   * `MCP-Protocol-Version` (every 2025-11-25 request, `initialize` first) is refused as a
   * 2026-07-28 server refuses it: HTTP 400, -32020; another version is -32022; GET and DELETE
   * (sessions, streams) are 405.
   */
  strict(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> | void {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ error: `${req.method} is not served: 2026-07-28 only` }),
      );
    }
    const version = req.headers['mcp-protocol-version'];
    if (version === undefined) {
      return sendJsonRpcError(res, 400, -32020, 'MCP-Protocol-Version header is missing');
    }
    if (version !== PROTOCOL_2026) {
      return sendJsonRpcError(res, 400, -32022, `Unsupported protocol version: ${String(version)}`);
    }
    return this.stateless.handle(req, res, body);
  }

  async sseStream(res: ServerResponse): Promise<void> {
    const server = createDemoServer(this.context);
    const transport = new SSEServerTransport('/messages', res);
    const session: HttpSession = {
      id: transport.sessionId,
      server,
      transport,
      initialized: false,
      sseStream: res,
    };
    this.sessions.add(session);
    transport.onclose = () => this.sessions.remove(session.id);
    await server.connect(transport);
    tapTransport(transport, this.context);
  }

  async ssePost(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = new URL(req.url ?? '/', 'http://localhost').searchParams.get('sessionId');
    const session = id === null ? undefined : this.sessions.get(id);
    if (!session) return sessionNotFound(res);
    if (this.dropsHere(session, body)) {
      session.sseStream?.socket?.destroy();
      return void req.socket.destroy();
    }
    // No forget-sessions here: legacy SSE answers on the GET stream after this POST has ended.
    await (session.transport as SSEServerTransport).handlePostMessage(req, res, body);
  }

  /** drop-after-initialize: handshake completes, then the first request loses its connection. */
  private dropsHere(session: HttpSession, body: unknown): boolean {
    if (!this.context.options.dropAfterInitialize) return false;
    if (session.initialized && hasRequest(body)) return true;
    if (hasInitialized(body)) session.initialized = true;
    return false;
  }
}
