import { randomUUID } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import { Options as HttpOptions } from 'pino-http';
import { LogFormat, LogLevel } from './logging.enum';
import { isHealthPath, REDACT_PATHS, REDACTED } from './redaction';

/** Settings of the process's one logger. */
export interface LoggingOptions {
  /** Minimum level; default `info`. */
  readonly level?: LogLevel;
  /** `json` (default; the production format) or `pretty` (local; needs the pino-pretty dev dep). */
  readonly format?: LogFormat;
  /** Bound as `name` on every line, e.g. `poller`. */
  readonly name?: string;
  /** Where lines go instead of stdout; tests pass a memory stream. */
  readonly destination?: DestinationStream;
}

/**
 * The format a deployment gets when `LOG_FORMAT` is unset: JSON in production, pretty elsewhere.
 * The config library calls this with its validated `NODE_ENV`; this library reads no environment.
 */
export function defaultLogFormat(nodeEnv: string | undefined): LogFormat {
  return nodeEnv === 'production' ? 'json' : 'pretty';
}

/** pino options shared by the Nest module and {@link createLogger}. */
export function buildLoggerOptions(opts: LoggingOptions): LoggerOptions {
  return {
    level: opts.level ?? 'info',
    name: opts.name,
    redact: { paths: [...REDACT_PATHS], censor: REDACTED },
    // Keep timestamps machine-sortable in JSON; pino's default epoch millis is harder to read.
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/** pino-http options: no probe access logs, request IDs, and no headers in access lines. */
export function buildHttpLoggerOptions(opts: LoggingOptions): HttpOptions {
  return {
    ...buildLoggerOptions(opts),
    autoLogging: { ignore: (req: IncomingMessage) => isHealthPath(req.url) },
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const incoming = req.headers['x-request-id'];
      // Accept a caller's ID only if it is short and plain, so it cannot inject into log lines.
      const id =
        typeof incoming === 'string' && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
      res.setHeader('x-request-id', id);
      return id;
    },
    customLogLevel: (_req, res, err) =>
      err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    // Headers are left out entirely (redaction stays as a second line of defence); the query
    // string is cut because callers put tokens in URLs more often than anyone expects.
    serializers: {
      req: (req: { id?: unknown; method?: string; url?: string }) => ({
        id: req.id,
        method: req.method,
        url: (req.url ?? '').split('?', 1)[0],
      }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
  };
}

/**
 * The stream lines are written to: `destination` if given, pretty-printed stdout for `pretty`,
 * else stdout. pino-pretty is a dev dependency and absent from the production image, so a
 * `pretty` request there falls back to JSON instead of crashing at boot.
 */
export function createLogStream(opts: LoggingOptions): DestinationStream {
  if (opts.destination) return opts.destination;
  if (opts.format === 'pretty') {
    const pretty = loadPretty();
    // sync: lines are written before the process exits, and no worker thread is left behind.
    if (pretty)
      return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  }
  // sync: a buffered destination loses its last lines when the process exits right after a
  // graceful shutdown (the drain summary and the aborted attempts are exactly those lines).
  return pino.destination({ dest: 1, sync: true });
}

/**
 * A plain pino logger for scripts outside Nest (the CLI, benchmarks, a poller's boot code).
 * @example const log = createLogger({ level: 'info', format: 'json', name: 'migrate' });
 */
export function createLogger(opts: LoggingOptions = {}): Logger {
  return pino(buildLoggerOptions(opts), createLogStream(opts));
}

type PrettyFactory = (options: Record<string, unknown>) => DestinationStream;

function loadPretty(): PrettyFactory | undefined {
  try {
    // A synchronous optional require: the module is absent in production images by design.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require('pino-pretty') as { default?: PrettyFactory } & PrettyFactory;
    return mod.default ?? mod;
  } catch {
    return undefined;
  }
}
