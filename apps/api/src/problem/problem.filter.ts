import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { isDatabaseUnavailable } from '@app/persistence';
import { isCatchAllRoute } from '../http/http-metrics.middleware';
import { isRefusal } from '../refusals/refusal';
import { ProblemAnswer, problemBody } from './problem.exception';
import { refusalProblem } from './refusal-problems';

export type { ProblemAnswer } from './problem.exception';

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
 * What an error answers as `application/problem+json` (RFC 9457): the API's refusals as
 * REFUSAL_PROBLEMS maps them, framework errors (unknown route, bad JSON, oversized body) with a generic detail, a
 * database that cannot serve the request now (no free connection in time, a lost or refused
 * connection) as a 503 with Retry-After (docs/api.md, "Errors"), and anything unexpected as a
 * bare 500 (no stack, no SQL). `allowedMethods` is asked only for a router's miss: the methods
 * routed for the path, which make it a 405. Shared by {@link ProblemFilter} and the submit fast
 * path.
 */
export function toProblem(
  exception: unknown,
  method: string,
  allowedMethods: () => string[],
): ProblemAnswer {
  if (isRefusal(exception)) return refusalProblem(exception);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    // Our own 404s are refusals, so a bare NotFoundException is the router's miss.
    if (status === 404) {
      const allowed = allowedMethods();
      if (allowed.length > 0) {
        return {
          body: problemBody(405, `${method} is not allowed here.`),
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

/** Logs what a 5xx answer hides from the client: its cause, at warn for a 503, else at error. */
export function logProblem(logger: Logger, answer: ProblemAnswer, exception: unknown): void {
  if (answer.body.status === 503) logger.warn(`answered 503: ${String(exception)}`);
  else if (answer.body.status >= 500) logger.error(exception);
}

/** Answers every error as {@link toProblem} says, and logs the cause of a 5xx. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    const answer = toProblem(exception, req.method, () => this.allowedMethods(req));
    logProblem(this.logger, answer, exception);
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    res
      .status(answer.body.status)
      .type('application/problem+json')
      .send(JSON.stringify(answer.body));
  }

  /** The methods routed for this path, if any: an unrouted method on a known path is a 405. */
  private allowedMethods(req: Request): string[] {
    const router = this.adapterHost.httpAdapter.getInstance<ExpressLike>().router;
    const methods = new Set<string>();
    for (const layer of router?.stack ?? []) {
      if (!layer.route || isCatchAllRoute(layer.route.path) || typeof layer.match !== 'function')
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
