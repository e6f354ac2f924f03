import type { IncomingMessage } from 'node:http';
import { storage, Store } from 'nestjs-pino/storage';
import type { Logger } from 'pino';

/**
 * Nest injection token of the process's pino-http access logger (pino-http's `HttpLogger`): the options
 * and stream of the one nestjs-pino mounts as middleware (`LoggingModule`). A handler that serves
 * a request outside Nest's middleware calls it with the request and response, then runs its work
 * in {@link runInRequestScope}.
 */
export const HTTP_ACCESS_LOG = Symbol('HTTP_ACCESS_LOG');

/**
 * Runs `fn` with `req.log` (set by the access logger) as the logger of every line logged through
 * Nest's `Logger` or nestjs-pino's `PinoLogger` meanwhile, as nestjs-pino's own middleware does
 * for a Nest route: those lines carry the request's ID. nestjs-pino exports no function for this,
 * so its storage is imported by path; test/api/submit-fast-path.test.ts fails if it moves.
 */
export function runInRequestScope<T>(req: IncomingMessage, fn: () => T): T {
  return storage.run(new Store((req as IncomingMessage & { log: Logger }).log), fn);
}
