import type { ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { GatewayMetrics } from '@app/metrics';

/** Label of requests no route matched: raw paths would make the label set unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Nest's catch-all (`/{*path}`, its wildcard for "every path"), which is no route of the app's
 * own. A route of the app's with a wildcard of its own name (the protected-resource metadata's
 * `*resource`) is one: it has its methods and its label.
 */
export function isCatchAllRoute(path: string): boolean {
  return path.includes('{*path}') || path === '*';
}

/**
 * Probes and scrapes are not user traffic: counted, the kubelet's readiness checks every few
 * seconds would dilute the error ratio and the latency percentiles the alerts read.
 */
function isOperationalPath(path: string): boolean {
  return path === '/metrics' || path === '/healthz' || path.startsWith('/healthz/');
}

/**
 * Times one request into `mcp_tasks_http_request_duration_seconds{route,method,status}` from now
 * until its answer is sent. `route` is asked then: the matched route is known only once routing
 * ran, and a request refused before it is `unmatched`. Shared by the Express middleware and the
 * submit fast path, so both label alike.
 */
export function timeRequest(
  metrics: GatewayMetrics,
  method: string,
  res: ServerResponse,
  route: () => string,
): void {
  const stop = metrics.httpRequestDuration.startTimer();
  res.once('finish', () => stop({ route: route(), method, status: String(res.statusCode) }));
}

/** The route pattern Express matched (`/v1/threads/:thread_id/tasks`), never the raw path. */
function routeOf(req: Request): string {
  const route = (req.route as { path?: unknown } | undefined)?.path;
  return typeof route === 'string' && !isCatchAllRoute(route) ? route : UNMATCHED_ROUTE;
}

/**
 * Times every user request (not `/healthz*` or `/metrics`) with {@link timeRequest}. Express
 * middleware rather than a Nest interceptor, so requests refused before a handler runs (401 from
 * the guard, 415/413 from body parsing, unknown routes) are measured too.
 */
export function httpMetricsMiddleware(metrics: GatewayMetrics): RequestHandler {
  // Named: the submit fast path's step list names the app's middleware (SubmitFastPathHandler).
  const httpMetrics: RequestHandler = (req, res, next) => {
    if (isOperationalPath(req.path)) return next();
    timeRequest(metrics, req.method, res, () => routeOf(req));
    next();
  };
  return httpMetrics;
}
