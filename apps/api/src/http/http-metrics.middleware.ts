import type { RequestHandler } from 'express';
import { GatewayMetrics } from '@app/metrics';

/** Label of requests no route matched: raw paths would make the label set unbounded. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Probes and scrapes are not user traffic: counted, the kubelet's readiness checks every few
 * seconds would dilute the error ratio and the latency percentiles the alerts read.
 */
function isOperationalPath(path: string): boolean {
  return path === '/metrics' || path === '/healthz' || path.startsWith('/healthz/');
}

/**
 * Times every user request (not `/healthz*` or `/metrics`) into `mcp_tasks_http_request_duration_seconds{route,method,status}`.
 * Express middleware rather than a Nest interceptor, so requests refused before a handler runs
 * (401 from the guard, 415/413 from body parsing, unknown routes) are measured too. The route
 * label is the matched pattern (`/v1/threads/:thread_id/tasks`), never the raw path.
 */
export function httpMetricsMiddleware(metrics: GatewayMetrics): RequestHandler {
  return (req, res, next) => {
    if (isOperationalPath(req.path)) return next();
    const stop = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      // Nest mounts its not-found handler on a catch-all route (`/{*path}`): that is no route.
      const matched = typeof route === 'string' && !route.includes('*');
      stop({
        route: matched ? route : UNMATCHED_ROUTE,
        method: req.method,
        status: String(res.statusCode),
      });
    });
    next();
  };
}
