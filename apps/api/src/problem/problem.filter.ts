import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { isDatabaseUnavailable } from '@app/persistence';
import { ProblemBody, ProblemException, problemBody } from './problem.exception';

/** Retry-After of a 503 for a database that could not serve the request in time. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

/** Generic details for framework errors, whose own messages may echo input or internals. */
const GENERIC_DETAIL: Readonly<Record<number, string>> = {
  400: 'The request is malformed.',
  401: 'A valid bearer token is required.',
  404: 'No such resource.',
  413: 'The request body is too large.',
  415: 'The request body must be application/json.',
  503: 'The service is not ready.',
};

/**
 * Answers every error as `application/problem+json` (RFC 9457): the API's own problems as
 * built, framework errors (unknown route, bad JSON, oversized body) with a generic detail, a
 * database that cannot serve the request now (no free connection in time, a lost or refused
 * connection) as a 503 with Retry-After (docs/api.md, "Errors"), and anything unexpected as a
 * bare 500 whose cause is logged, never sent (no stack, no SQL).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const { body, headers } = this.toProblem(exception, req);
    if (body.status === 503) this.logger.warn(`answered 503: ${String(exception)}`);
    else if (body.status >= 500) this.logger.error(exception);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
  }

  private toProblem(
    exception: unknown,
    req: Request,
  ): { body: ProblemBody; headers: Readonly<Record<string, string>> } {
    if (exception instanceof ProblemException)
      return { body: exception.problem, headers: exception.headers };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      // Our own 404s are ProblemExceptions, so a bare NotFoundException is the router's miss.
      if (status === 404) {
        const allowed = this.allowedMethods(req);
        if (allowed.length > 0) {
          return {
            body: problemBody(405, `${req.method} is not allowed here.`),
            headers: { Allow: allowed.join(', ') },
          };
        }
      }
      return {
        body: problemBody(status, GENERIC_DETAIL[status] ?? 'The request failed.'),
        headers: {},
      };
    }
    if (isDatabaseUnavailable(exception)) {
      return {
        body: problemBody(503, 'The service is busy or cannot reach its database; retry shortly.'),
        headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      };
    }
    return { body: problemBody(500, 'An internal error occurred.'), headers: {} };
  }

  /** The methods routed for this path, if any: an unrouted method on a known path is a 405. */
  private allowedMethods(req: Request): string[] {
    const router = this.adapterHost.httpAdapter.getInstance<ExpressLike>().router;
    const methods = new Set<string>();
    for (const layer of router?.stack ?? []) {
      // Skip the catch-all that Nest's not-found handler is mounted on.
      if (!layer.route || layer.route.path.includes('*') || typeof layer.match !== 'function')
        continue;
      try {
        if (layer.match(req.path))
          for (const m of Object.keys(layer.route.methods))
            if (m !== '_all') methods.add(m.toUpperCase());
      } catch {
        // A path the matcher cannot decode is simply not a match.
      }
    }
    if (methods.has('GET')) methods.add('HEAD'); // Express answers HEAD from GET routes
    return [...methods].sort();
  }
}

interface ExpressLike {
  router?: {
    stack: {
      route?: { path: string; methods: Record<string, boolean> };
      match?: (path: string) => boolean;
    }[];
  };
}
