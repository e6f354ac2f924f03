import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { THREAD_ID_PATTERN } from '@app/common';
import { HTTP_ACCESS_LOG, runInRequestScope } from '@app/logging';
import { GatewayMetrics } from '@app/metrics';
import { authenticate } from '../auth/auth.guard';
import { bearerToken, unauthorized } from '../auth/bearer-first.middleware';
import type { AuthenticatedRequest } from '../auth/current-user.decorator';
import { UNMATCHED_ROUTE, timeRequest } from '../http/http-metrics.middleware';
import { sendJson } from '../http/json-answer';
import { standBefore } from '../http/request-listener';
import {
  JsonBodyReader,
  createJsonBodyReader,
  nonJsonBodyProblem,
  parserProblem,
} from '../http/json-body.middleware';
import { bodyTextProblem } from '../http/json-text.guard';
import { logProblem, toProblem } from '../problem/problem.filter';
import { TokenVerifier } from '../auth/token-verifier.service';
import { HttpSubmitService } from './http-submit.service';

/** The route pattern the metrics name, as Express names the Nest route's. */
const SUBMIT_ROUTE = '/v1/threads/:thread_id/tasks';
// No query string: the route takes no parameters, and Nest's route refuses any (400).
const SUBMIT_PATH = /^\/v1\/threads\/([^/?]*)\/tasks$/;

/** The request as the steps below leave it: body-parser's body, the guard's principal. */
type SubmitRequest = IncomingMessage & { body?: unknown } & Pick<
    AuthenticatedRequest,
    'principal' | 'reverify'
  >;

/** pino-http's middleware as LoggingModule provides it (HTTP_ACCESS_LOG). */
type AccessLog = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `POST /v1/threads/{thread_id}/tasks` without Express and Nest: the same steps in the same order,
 * each the one implementation the Nest route runs (timing, bearer syntax, 415, body parsing,
 * text guard, access log, authentication, {@link HttpSubmitService}, problem answers), called
 * directly. Express's router and middleware plumbing and Nest's guard, pipe and parameter layers
 * were about a quarter of a submit's CPU: 1.53 against 1.16 ms per submit at 300/s, the same build
 * with the fast path off and on (docs/benchmarks.md, "API CPU per submit, third pass").
 *
 * It takes a request only when nothing about it is unusual: the exact lower-case path with a
 * thread ID that already matches the pattern (no percent-encoding), no query string and no
 * Content-Encoding. Every other request, a trailing slash, a bad thread ID, a query parameter
 * (a 400 there: the route takes none), a compressed body, goes to Express
 * untouched, whose Nest route answers it as before. test/api/submit-fast-path.test.ts compares
 * the two routes answer for answer. Every global step of the app (middleware, guards,
 * interceptors, pipes, filters) is listed with what this path does about it in FAST_PATH_STEPS
 * (submit-fast-path.steps.ts); test/api/submit-fast-path-steps.test.ts fails when a step is added
 * to the app and not to that list.
 */
@Injectable()
export class SubmitFastPathHandler {
  private readonly readBody: JsonBodyReader = createJsonBodyReader();
  private readonly logger = new Logger('ProblemFilter');

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly verifier: TokenVerifier,
    private readonly httpSubmit: HttpSubmitService,
    @Inject(HTTP_ACCESS_LOG) private readonly accessLog: AccessLog,
  ) {}

  /** Puts the fast path in front of `fallback` (Express) as the server's request listener. */
  install(server: Server, fallback: RequestListener): void {
    standBefore(server, fallback, (req, res) => {
      const threadId = this.takes(req);
      if (threadId === undefined) fallback(req, res);
      else this.handle(req, res, threadId);
    });
  }

  /** The thread ID of a request this path serves, else undefined. */
  private takes(req: IncomingMessage): string | undefined {
    if (req.method !== 'POST' || req.headers['content-encoding'] !== undefined) return undefined;
    const threadId = SUBMIT_PATH.exec(req.url ?? '')?.[1];
    return threadId !== undefined && THREAD_ID_PATTERN.test(threadId) ? threadId : undefined;
  }

  private handle(req: SubmitRequest, res: ServerResponse, threadId: string): void {
    // Until the body is read the Nest route's request has not reached its route either:
    // refusals before then are `unmatched` and carry no access line, as there.
    let routed = false;
    timeRequest(this.metrics, 'POST', res, () => (routed ? SUBMIT_ROUTE : UNMATCHED_ROUTE));
    if (bearerToken(req) === undefined) return this.refuse(res, unauthorized());
    const notJson = nonJsonBodyProblem(req);
    if (notJson) return this.refuse(res, notJson);
    this.readBody(req, res, (error) => {
      const problem = error === undefined ? bodyTextProblem(req.body) : parserProblem(error);
      if (problem) return this.refuse(res, problem);
      routed = true;
      this.accessLog(req, res);
      runInRequestScope(req, () => void this.submit(req, res, threadId));
    });
  }

  private async submit(req: SubmitRequest, res: ServerResponse, threadId: string): Promise<void> {
    try {
      const principal = await authenticate(this.verifier, req);
      const headers = req.headers;
      const answer = await this.httpSubmit.answer({
        userId: principal.userId,
        tenant: principal.tenant,
        threadId,
        body: req.body,
        idempotencyKey: header(headers['idempotency-key']),
        prefer: header(headers.prefer),
        traceparent: header(headers.traceparent),
        tracestate: header(headers.tracestate),
        res,
      });
      sendJson(res, answer.status, answer.headers, 'application/json', JSON.stringify(answer.task));
    } catch (error) {
      this.refuse(res, error);
    }
  }

  /** Answers an error as the problem filter does (the same answer, the same log line). */
  private refuse(res: ServerResponse, error: unknown): void {
    const answer = toProblem(error, 'POST', () => []);
    logProblem(this.logger, answer, error);
    if (res.headersSent) {
      res.end();
      return;
    }
    const headers = Object.entries(answer.headers);
    sendJson(
      res,
      answer.body.status,
      headers,
      'application/problem+json',
      JSON.stringify(answer.body),
    );
  }
}

/** A header as Nest's `@Headers(name)` hands it over (Node joins repeats of these into one). */
function header(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
