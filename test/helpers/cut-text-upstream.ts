// An `ordinary`-contract MCP server over Streamable HTTP on 127.0.0.1, in the test's own process,
// whose answers can carry a lone UTF-16 surrogate (a string cut in the middle of an emoji). JSON
// allows the escape `\ud83d` alone, and `JSON.stringify` writes a lone surrogate as exactly that
// escape, so the raw JSON text the gateway reads holds it. Hand-written JSON-RPC, one answer per
// POST as `application/json` (a transport the spec allows), so the test sees every call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Half of U+1F600: what is left of an emoji cut after its first UTF-16 unit. */
export const LONE_SURROGATE = '\ud83d';

/** What a submit's `kind` argument makes of the job. */
export type CutTextKind = 'healthy' | 'cut_result' | 'cut_id';

export interface CutTextUpstream {
  /** The MCP endpoint, for an mcpServers `url`. */
  readonly url: string;
  /** Remote task IDs the gateway called the cancel tool for, as received. */
  readonly cancelled: string[];
  /** Raw JSON answers sent so far that carried a lone surrogate escape. */
  readonly cutAnswers: number;
  close(): Promise<void>;
}

/** The tools; the submit tool's description and schema (the catalog's entry) carry a cut too. */
const TOOLS = ['cut_submit', 'cut_status', 'cut_cancel'].map((name) => ({
  name,
  ...(name === 'cut_submit' && { description: `Starts a job ${LONE_SURROGATE}` }),
  inputSchema: {
    type: 'object',
    properties: { kind: { type: 'string', description: `what to cut ${LONE_SURROGATE}` } },
  },
}));

/** Starts the server; every job completes at its first status call. */
export async function startCutTextUpstream(): Promise<CutTextUpstream> {
  const jobs = new Map<string, CutTextKind>();
  const cancelled: string[] = [];
  let cutAnswers = 0;
  let next = 0;

  const structured = (value: Record<string, unknown>) => ({
    content: [{ type: 'text', text: 'see structuredContent' }],
    structuredContent: value,
  });

  const call = (name: string, args: Record<string, unknown>): unknown => {
    if (name === 'cut_submit') {
      const kind = (args.kind as CutTextKind | undefined) ?? 'healthy';
      next += 1;
      const id = kind === 'cut_id' ? `job-${next}-${LONE_SURROGATE}` : `job-${next}`;
      jobs.set(id, kind);
      return structured({ task_id: id, status: 'running' });
    }
    const id = String(args.task_id);
    const kind = jobs.get(id);
    if (kind === undefined) {
      return structured({
        task_id: id,
        status: 'failed',
        error_code: 'task_not_found',
        error: 'no such job',
      });
    }
    if (name === 'cut_cancel') {
      cancelled.push(id);
      return structured({ task_id: id, status: 'cancelled' });
    }
    const text = kind === 'cut_result' ? `cut emoji ${LONE_SURROGATE}` : 'whole';
    return structured({
      task_id: id,
      status: 'completed',
      result: { text },
      progress: { current: 1, total: 1, message: text },
    });
  };

  const answer = (method: string, params: Record<string, unknown>): unknown => {
    switch (method) {
      case 'initialize':
        return {
          protocolVersion: params.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'cut-text', version: '1.0.0' },
        };
      case 'ping':
        return {};
      case 'tools/list':
        return { tools: TOOLS };
      case 'tools/call':
        return call(String(params.name), (params.arguments ?? {}) as Record<string, unknown>);
      default:
        return undefined;
    }
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      // No server-initiated stream (GET) and nothing to end (DELETE): 405, as the spec allows.
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: number | string;
        method: string;
        params?: Record<string, unknown>;
      };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const result = answer(message.method, message.params ?? {});
      const reply =
        result === undefined
          ? { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'not found' } }
          : { jsonrpc: '2.0', id: message.id, result };
      const body = JSON.stringify(reply);
      if (body.includes('\\ud83d')) cutAnswers += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    cancelled,
    get cutAnswers() {
      return cutAnswers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
