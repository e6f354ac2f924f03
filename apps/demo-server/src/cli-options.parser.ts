/**
 * Command-line and environment parsing for the demo server. Every fault switch can also be set
 * through `DEMO_<NAME>` (e.g. `DEMO_NO_PING=1`) so a test harness that only controls the
 * environment (an `mcpServers` config with `env`) can still turn faults on.
 */
export type DemoTransport = 'stdio' | 'http' | 'sse';

export interface DemoOptions {
  transport: DemoTransport;
  port: number;
  host: string;
  stateFile?: string;
  noPing: boolean;
  html: boolean;
  slowInitializeMs: number;
  dropAfterInitialize: boolean;
  forgetSessions: boolean;
  /** Streamable HTTP answers each POST with one JSON body instead of an SSE stream. */
  jsonResponse: boolean;
  /**
   * Speaks MCP 2026-07-28 only, as a server built for that revision may: a request without the
   * `MCP-Protocol-Version` header (so `initialize`) is refused with HTTP 400 and -32020.
   */
  strict2026: boolean;
  /** Speaks MCP 2025-11-25 only: a 2026-07-28 request (`server/discover` too) takes the SDK path. */
  only2025: boolean;
  requireAuth?: string;
  /**
   * Pushes nothing: no `subscriptions/listen` (-32601) and no `notifications/tasks/status`, as
   * a server that only answers polls.
   */
  noPush: boolean;
}

/** Thrown for a bad command line; main prints the message and exits 2, like most CLIs. */
export class CliUsageError extends Error {}

const BOOLEAN_FLAGS = {
  'no-ping': 'noPing',
  html: 'html',
  'drop-after-initialize': 'dropAfterInitialize',
  'forget-sessions': 'forgetSessions',
  'json-response': 'jsonResponse',
  'strict-2026': 'strict2026',
  'only-2025': 'only2025',
  'no-push': 'noPush',
} as const;

const VALUE_FLAGS = [
  'transport',
  'port',
  'host',
  'state-file',
  'slow-initialize-ms',
  'require-auth',
] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];

function envName(flag: string): string {
  return `DEMO_${flag.toUpperCase().replace(/-/g, '_')}`;
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function parseInteger(flag: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new CliUsageError(`--${flag} must be an integer between ${min} and ${max}`);
  }
  return value;
}

export function parseCliOptions(argv: string[], env: NodeJS.ProcessEnv): DemoOptions {
  const values = new Map<ValueFlag, string>();
  const booleans = new Set<string>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new CliUsageError(`unexpected argument: ${arg}`);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
    if (Object.hasOwn(BOOLEAN_FLAGS, name)) {
      booleans.add(name);
    } else if ((VALUE_FLAGS as readonly string[]).includes(name)) {
      const value = inline ?? argv[(i += 1)];
      if (value === undefined) throw new CliUsageError(`--${name} needs a value`);
      values.set(name as ValueFlag, value);
    } else {
      throw new CliUsageError(`unknown option: --${name}`);
    }
  }
  const value = (flag: ValueFlag): string | undefined => values.get(flag) ?? env[envName(flag)];
  const flag = (name: keyof typeof BOOLEAN_FLAGS): boolean =>
    booleans.has(name) || isTruthy(env[envName(name)]);

  const transport = value('transport') ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http' && transport !== 'sse') {
    throw new CliUsageError('--transport must be stdio, http or sse');
  }
  const strict2026 = flag('strict-2026');
  if (strict2026 && transport === 'sse') {
    throw new CliUsageError('--strict-2026 needs --transport http or stdio (not legacy SSE)');
  }
  const only2025 = flag('only-2025');
  if (strict2026 && only2025)
    throw new CliUsageError('--strict-2026 and --only-2025 exclude each other');
  const port = value('port');
  const slow = value('slow-initialize-ms');
  const requireAuth = value('require-auth');
  return {
    transport,
    port: port === undefined ? 3001 : parseInteger('port', port, 0, 65535),
    host: value('host') ?? '127.0.0.1',
    stateFile: value('state-file') || undefined,
    noPing: flag('no-ping'),
    noPush: flag('no-push'),
    html: flag('html'),
    jsonResponse: flag('json-response'),
    strict2026,
    only2025,
    slowInitializeMs:
      slow === undefined ? 0 : parseInteger('slow-initialize-ms', slow, 0, 2 ** 31 - 1),
    dropAfterInitialize: flag('drop-after-initialize'),
    forgetSessions: flag('forget-sessions'),
    requireAuth: requireAuth || undefined,
  };
}
