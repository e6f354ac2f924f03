import {
  createServer,
  request as forward,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What an HTTP proxy in front of an MCP server does with one request: pass it on, or answer it
 * itself as a load balancer or a rate limiter would (a 502 page, a 429 with Retry-After).
 */
export type ProxyAnswer =
  'through' | { status: number; headers?: Record<string, string>; body?: string };

/** A request as the proxy read it, for a decision: its JSON-RPC method and params, when it has them. */
export interface ProxiedRequest {
  req: IncomingMessage;
  body: Buffer;
  method?: string;
  params?: Record<string, unknown>;
}

/** An HTTP proxy on 127.0.0.1 that reads each request's body before it decides. */
export interface HttpProxy {
  /** `http://127.0.0.1:<port>` followed by `path`. */
  url(path: string): string;
  /** The JSON-RPC method of every request that carried one, in arrival order. */
  readonly methods: readonly string[];
  close(): Promise<void>;
}

/**
 * Starts a proxy to `target` (an origin, e.g. `http://127.0.0.1:4100`): each request's body is
 * read whole, `decide` answers it or lets it through (a promise holds the request until the
 * test settles it), and answers from the target stream back as they come (an SSE stream stays
 * a stream).
 */
export async function startHttpProxy(
  target: URL,
  decide: (request: ProxiedRequest) => ProxyAnswer | Promise<ProxyAnswer> = () => 'through',
): Promise<HttpProxy> {
  const methods: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const request: ProxiedRequest = { req, body, ...jsonRpc(body) };
      if (request.method !== undefined) methods.push(request.method);
      Promise.resolve(decide(request)).then(
        (answer) => {
          if (answer !== 'through') {
            res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
            return;
          }
          pass(req, body, res);
        },
        () => res.destroy(),
      );
    });
  });
  /** Sends `req` on to the target and streams its answer back. */
  const pass = (req: IncomingMessage, body: Buffer, res: ServerResponse): void => {
    const upstream = forward(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
      },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    upstream.end(body);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    methods,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function jsonRpc(body: Buffer): Pick<ProxiedRequest, 'method' | 'params'> {
  if (body.length === 0) return {};
  try {
    const message = JSON.parse(body.toString('utf8')) as { method?: unknown; params?: unknown };
    return {
      method: typeof message.method === 'string' ? message.method : undefined,
      params:
        typeof message.params === 'object' && message.params !== null
          ? (message.params as Record<string, unknown>)
          : undefined,
    };
  } catch {
    return {};
  }
}
