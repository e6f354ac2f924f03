import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ConnectionCloser } from '@app/lifecycle';

/** What a health route answers: an HTTP status and an optional JSON body. */
export interface RouteResult {
  readonly status: number;
  readonly body?: unknown;
}

/** A GET handler for one exact path, e.g. `/healthz/ready`. It must not throw secrets. */
export type MetricsRouteHandler = () => RouteResult | Promise<RouteResult>;

/** Extra options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** Interface to bind; default all interfaces (Prometheus and the kubelet connect from outside). */
  readonly host?: string;
  /** Told about handler failures only; requests themselves are never logged (probe noise). */
  readonly onError?: (err: unknown, path: string) => void;
}

/** A running metrics server. */
export interface MetricsServer {
  /** The bound port (useful when started on port 0). */
  readonly port: number;
  /** Stops accepting connections and closes each once it has nothing to answer; resolves then. */
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` from `registry` plus `extraRoutes` on a bare node:http server. No Express:
 * the poller has no other HTTP surface, and a scrape must keep working while Nest is shutting
 * down. Nothing here logs a request, so probes every few seconds cost no log lines.
 *
 * @param registry the process's registry (`MetricsService.registry`).
 * @param port TCP port; 0 picks a free one.
 * @param extraRoutes exact-path GET handlers, e.g. `{ '/healthz/live': () => ({ status: 200 }) }`.
 */
export async function startMetricsServer(
  registry: Registry,
  port: number,
  extraRoutes: Readonly<Record<string, MetricsRouteHandler>> = {},
  options: MetricsServerOptions = {},
): Promise<MetricsServer> {
  const routes: Record<string, MetricsRouteHandler> = {
    ...extraRoutes,
    '/metrics': async () => ({ status: 200, body: await registry.metrics() }),
  };
  const server = createServer((req, res) => {
    void handle(req, res, routes, registry.contentType, options.onError);
  });
  // Keep-alive sockets held by Prometheus, or connections that never sent a request, must not
  // delay exit: close() closes each once it has nothing left to answer.
  const connections = new ConnectionCloser(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => closeServer(server, connections),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  routes: Record<string, MetricsRouteHandler>,
  metricsContentType: string,
  onError: MetricsServerOptions['onError'],
): Promise<void> {
  const path = (req.url ?? '/').split('?', 1)[0];
  const handler = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (!handler) return send(res, 404, { error: 'not_found' });
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'method' });
  try {
    const result = await handler();
    if (path === '/metrics' && typeof result.body === 'string') {
      res.writeHead(result.status, { 'content-type': metricsContentType });
      res.end(req.method === 'HEAD' ? undefined : result.body);
      return;
    }
    send(res, result.status, result.body ?? {}, req.method === 'HEAD');
  } catch (err) {
    onError?.(err, path);
    // The error text stays in the process: a probe response is visible to anyone on the network.
    send(res, 500, { error: 'internal' });
  }
}

function send(res: ServerResponse, status: number, body: unknown, headOnly = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(headOnly ? undefined : text);
}

function closeServer(server: Server, connections: ConnectionCloser): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    connections.closeWhenAnswered();
  });
}
