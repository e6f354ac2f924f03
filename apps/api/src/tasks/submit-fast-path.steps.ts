/** One global step of the app, by the name the running app gives it, and what the fast path does. */
type Step = readonly [name: string, instead: string];

/**
 * What the submit fast path (SubmitFastPathHandler) does about each global step of the app: the
 * Express middleware in order (configure-app.ts's and Nest's own; `<anonymous>` is how Express
 * lists an unnamed one), the middleware Nest modules apply, and Nest's global guards,
 * interceptors, pipes and filters. The fast path bypasses Express and Nest, so a step added to
 * the app runs on every route but this one unless the fast path does it too:
 * test/api/submit-fast-path-steps.test.ts reads the globals of a running API and fails until this
 * list names the new step and says what the fast path does instead, or why nothing is needed.
 * Data only, so the test loads it without the app.
 */
export const FAST_PATH_STEPS = {
  middleware: [
    ['<anonymous>', "nothing: Nest's Express adapter hooks for request and response, none is set"],
    ['httpMetrics', 'timeRequest, the function it calls, before anything else'],
    [
      'bearerFirst',
      'bearerToken() and unauthorized(), its check and its refusal, before the body is read',
    ],
    ['requireJson', 'nonJsonBodyProblem, its check (the 415)'],
    ['jsonParser', 'createJsonBodyReader, the same body-parser with the same limit'],
    ['mapErrors', 'parserProblem, its mapping of parser errors'],
    ['jsonText', 'bodyTextProblem, its check (text Postgres cannot store, JSON too deep)'],
    ['serveStatic', 'nothing: the API documentation files, GET only'],
    ['<anonymous>', "nothing: Nest's answer to a request no route took; this path takes one route"],
    ['<anonymous>', "refuse(): Nest's error handler hands errors to the global filters (below)"],
  ],
  moduleMiddleware: [
    ['LoggerModule #1', 'accessLog: pino-http with the same options and stream (HTTP_ACCESS_LOG)'],
    ['LoggerModule #2', "runInRequestScope: nestjs-pino's binding of the request's logger"],
  ],
  guards: [
    ['AuthGuard', 'authenticate(), the function it calls, with the same verifier'],
    [
      'QueryParamsGuard',
      'nothing: the route takes no query parameter, and a request with a query string is not taken (SUBMIT_PATH); Express and this guard answer it',
    ],
  ],
  interceptors: [],
  pipes: [],
  filters: [
    ['ProblemFilter', 'refuse(): toProblem and logProblem, as the filter answers and logs'],
  ],
} as const satisfies Record<string, readonly Step[]>;
