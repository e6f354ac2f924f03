// Spawns the real poller and demo MCP server processes for fleet tests, each registered with the
// file's process scope (process-scope.ts); stopAllProcesses stops them mid-file.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@app/dev-db';
import { waitUntil } from './wait';
import { request2026 } from './mcp-2026';
import { processScope, stopChild, waitForExit } from './process-scope';

export { waitForExit };

// Works from test/helpers (jest) and from dist/test/helpers (compiled benchmarks).
/** The repository root. */
export const ROOT = join(
  __dirname,
  '..',
  '..',
  ...(basename(join(__dirname, '..', '..')) === 'dist' ? ['..'] : []),
);
const DIST = join(ROOT, 'dist', 'apps');
/** The compiled poller entry point (build first: `npm run build`). */
export const POLLER_MAIN = join(DIST, 'poller', 'main.js');
/** The compiled demo MCP server entry point. */
export const DEMO_SERVER_MAIN = join(DIST, 'demo-server', 'main.js');

/**
 * How to launch the demo server on stdio, with its extra `args`: the command of every stdio
 * config the tests build (a poller's entry, a pool's ServerConfig, an SDK transport), each with
 * its own timeouts.
 */
export function demoStdioCommand(args: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [DEMO_SERVER_MAIN, '--transport', 'stdio', ...args] };
}

const children = new Set<ChildProcess>();

/** Short timings for fleet tests: the whole poller suite stays within a few minutes. */
export const FAST_POLLER_ENV: Readonly<Record<string, string>> = {
  LEASE_MS: '3000',
  POLL_INTERVAL_MS: '300',
  MIN_POLL_INTERVAL_MS: '100',
  INPUT_REQUIRED_POLL_INTERVAL_MS: '1000',
  BACKOFF_BASE_MS: '200',
  MAX_BACKOFF_MS: '2000',
  HEARTBEAT_INTERVAL_MS: '500',
  CLAIM_FALLBACK_INTERVAL_MS: '1000',
  DRAIN_TIMEOUT_MS: '3000',
  // The demo server answers ~100 calls/s on a 2-core box; 8 slots per poller keep three pollers
  // well inside the 1.9 s call deadline.
  WORKER_SLOTS: '8',
  LOG_LEVEL: 'info',
  LOG_FORMAT: 'json',
  NODE_ENV: 'test',
};

function assertBuilt(path: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first`);
}

/** SIGTERM, then SIGKILL after `graceMs`; a stopped (SIGSTOP) child is continued first. */
export async function stopProcess(child: ChildProcess, graceMs = 5000): Promise<void> {
  await stopChild(child, graceMs);
  children.delete(child);
}

/**
 * Stops every demo server and poller these helpers started so far (not APIs, nor a Postgres), for
 * a test that needs them gone mid-file; the file's scope stops them anyway after it. Resolves with
 * how many were still running (a test that expects its processes gone can assert on it).
 */
export async function stopAllProcesses(): Promise<number> {
  const running = [...children].filter(
    (child) => child.exitCode === null && child.signalCode === null,
  );
  await Promise.all([...children].map((child) => stopProcess(child, 2000)));
  return running.length;
}

// ---------------------------------------------------------------------------------------------
// Demo MCP server

/** A running demo MCP server over Streamable HTTP. */
export interface DemoServerProcess {
  /** Base URL, e.g. http://127.0.0.1:PORT (the MCP endpoint is `${url}/mcp`). */
  url: string;
  child: ChildProcess;
  /** demo_stats (counters, per-tag submits and cancels) through a fresh MCP client. */
  stats(tag?: string): Promise<DemoStats>;
  /** SIGTERM (SIGKILL after a grace). */
  stop(): Promise<void>;
  /** SIGKILL: the server dies without closing its connections. */
  kill(): Promise<void>;
}

/** The parts of demo_stats the fleet tests read. */
export interface DemoStats {
  ordinary: { submits: number; status_calls: number; cancels: number };
  live_jobs: number;
  /** demo_slow calls held open now, and the most at once since the server started. */
  held_calls: { in_flight: number; max: number };
  /** demo_slow calls received, and how they ended. */
  sync: { calls: number; completed: number; cancelled: number; failed: number };
  by_tag: Record<string, { submits: number; cancels: number; cancelled: boolean; state: string }>;
}

/**
 * Spawns `demo-server --transport http` and resolves once it prints its listening line.
 * @param args extra flags, e.g. `['--slow-initialize-ms', '60000']`.
 * @param options.port a fixed port (default 0: a free one); options.env extra environment.
 */
export async function startDemoServer(
  args: string[] = [],
  options: { port?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<DemoServerProcess> {
  assertBuilt(DEMO_SERVER_MAIN);
  const { url, child } = await startListening(
    'a demo server',
    'startDemoServer',
    [DEMO_SERVER_MAIN, '--transport', 'http', '--port', String(options.port ?? 0), ...args],
    options.env,
  );
  return {
    url,
    child,
    stats: (tag) => demoStats(url, tag),
    stop: () => stopProcess(child),
    async kill() {
      child.kill('SIGKILL');
      await waitForExit(child, 5000);
      children.delete(child);
    },
  };
}

/**
 * Spawns a test's own HTTP server script with Node (an `.mjs` file beside the test, such as a
 * server built on an ESM-only library) and resolves once it prints `listening on <url>`.
 */
export async function startScriptServer(
  script: string,
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const { url, child } = await startListening(basename(script), 'startScriptServer', [
    script,
    ...args,
  ]);
  return { url, child, stop: () => stopProcess(child) };
}

/** `node <argv>` in the file's process scope, resolved with the URL of its listening line. */
async function startListening(
  what: string,
  helper: string,
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ url: string; child: ChildProcess }> {
  const scope = processScope(`${what} (${helper})`);
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  scope?.child(child, what, { tail: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} silent: ${stderr}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  return { url, child };
}

/**
 * Calls demo_stats on the server at `url` with a short-lived client. The SDK's client is loaded
 * here, not with this file: jest loads a file's modules afresh for every test file, and the
 * client with its schemas is about 0.2 s of a worker's CPU that most test files never use.
 */
export async function demoStats(url: string, tag?: string): Promise<DemoStats> {
  // Asked on the 2026-07-28 side: every HTTP demo server serves it, --strict-2026 ones only it.
  const { body, headers } = request2026('tools/call', {
    name: 'demo_stats',
    arguments: tag ? { tag } : {},
  });
  const response = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { result?: { structuredContent?: unknown } };
  if (!answer.result) throw new Error(`demo_stats failed: ${JSON.stringify(answer)}`);
  return answer.result.structuredContent as DemoStats;
}

// ---------------------------------------------------------------------------------------------
// mcpServers files

/** One server entry of an mcpServers file, as JSON (see connections.md). */
export type ServerEntry = Record<string, unknown>;

/** The demo server's ordinary tools, as an `ordinary` toolset entry names them (add `name`). */
export const DEMO_ORDINARY_TOOLS = {
  contract: 'ordinary',
  submitTool: 'demo_submit',
  statusTool: 'demo_status',
  cancelTool: 'demo_cancel',
} as const;

/**
 * An HTTP server entry exposing the demo's ordinary tools as toolset `toolset` (and optionally
 * a sync-call toolset `${toolset}-sync` on demo_slow). Timeouts fit a 3 s lease (1 s + 1.9 s).
 */
export function demoServerEntry(
  url: string,
  toolset: string,
  options: {
    maxConcurrentCalls?: number;
    fleetMaxConcurrentCalls?: number;
    retryOnCrash?: boolean;
    sync?: boolean;
  } = {},
): ServerEntry {
  const taskToolsets: Record<string, unknown>[] = [
    { name: toolset, ...DEMO_ORDINARY_TOOLS, retryOnCrash: options.retryOnCrash ?? false },
  ];
  if (options.sync) {
    taskToolsets.push({
      name: `${toolset}-sync`,
      contract: 'sync-call',
      tool: 'demo_slow',
      callTimeoutMs: 600_000,
    });
  }
  return {
    url: `${url}/mcp`,
    connectTimeoutMs: 1000,
    callTimeoutMs: 1900,
    maxConcurrentCalls: options.maxConcurrentCalls ?? 8,
    ...(options.fleetMaxConcurrentCalls === undefined
      ? {}
      : { fleetMaxConcurrentCalls: options.fleetMaxConcurrentCalls }),
    taskToolsets,
  };
}

/**
 * An HTTP server entry exposing demo tools as `mcp-tasks` toolsets (`{toolset: tool}`), for a
 * `--strict-2026` demo server (or any). Pinned to 2026-07-28 an attempt is at most two 1.4 s calls,
 * which fit the 3 s test lease; unpinned, the worst chain (a cancel: a connect and three calls,
 * 5.2 s) needs `LEASE_MS` 8000 (docs/leases.md, "Attempt deadlines").
 */
export function demoTasksEntry(
  url: string,
  toolsets: Record<string, string>,
  options: { pinned?: boolean } = {},
): ServerEntry {
  return {
    url: `${url}/mcp`,
    ...(options.pinned ? { protocolVersion: '2026-07-28' } : {}),
    connectTimeoutMs: 1000,
    callTimeoutMs: 1400,
    maxConcurrentCalls: 8,
    taskToolsets: Object.entries(toolsets).map(([name, tool]) => ({
      name,
      contract: 'mcp-tasks',
      tool,
    })),
  };
}

/** A stdio server entry: the demo server as a child of each poller, with `taskToolsets`. */
export function demoStdioEntry(taskToolsets: Record<string, unknown>[]): ServerEntry {
  return {
    ...demoStdioCommand(),
    // Spawning node and initializing takes well over a second on a loaded box.
    connectTimeoutMs: 2000,
    callTimeoutMs: 900,
    maxConcurrentCalls: 8,
    taskToolsets,
  };
}

/** Writes an mcpServers file into a fresh temp directory and returns its path. */
export function writeServersFile(servers: Record<string, ServerEntry>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mtg-servers-'));
  const path = join(dir, 'mcp-servers.json');
  writeFileSync(path, JSON.stringify({ mcpServers: servers }, null, 2));
  return path;
}

// ---------------------------------------------------------------------------------------------
// Pollers

/** A running poller process. */
export interface PollerProcess {
  child: ChildProcess;
  workerId: string;
  metricsPort: number;
  /** Every JSON log line so far, parsed. */
  logs: Record<string, unknown>[];
  /** Everything written to stderr so far (a crash's stack lands here, not in the JSON log). */
  stderr(): string;
  /** GET /metrics text. */
  metrics(): Promise<string>;
  /** SIGTERM and wait for a graceful exit; resolves with the exit code. */
  terminate(timeoutMs?: number): Promise<number | null>;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
}

export interface PollerOptions {
  databaseUrl: string;
  serversFile: string;
  workerId?: string;
  /** Extra or overriding environment (FAST_POLLER_ENV is the base). */
  env?: Record<string, string>;
  /** Wait for /healthz/ready (default true). */
  waitReady?: boolean;
}

let pollerCount = 0;

/** Spawns `dist/apps/poller/main.js` and (by default) waits until it is ready and claiming. */
export async function startPoller(options: PollerOptions): Promise<PollerProcess> {
  assertBuilt(POLLER_MAIN);
  const scope = processScope('a poller (startPoller)');
  const metricsPort = await freePort();
  const workerId = options.workerId ?? `test-poller-${process.pid}-${++pollerCount}`;
  const child = spawn(process.execPath, [POLLER_MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      // Set by the global setup: where the bundles keep their compiled code between starts.
      ...(process.env.NODE_COMPILE_CACHE && { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE }),
      // Set by the global setup too: the tests' smaller pools.
      ...(process.env.DATABASE_POOL_SIZE && { DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE }),
      ...FAST_POLLER_ENV,
      DATABASE_URL: options.databaseUrl,
      MCP_SERVERS_FILE: options.serversFile,
      METRICS_PORT: String(metricsPort),
      WORKER_ID: workerId,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  scope?.child(child, `poller ${workerId}`, { tail: true });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      logs.push({ msg: line });
    }
  });
  const base = `http://127.0.0.1:${metricsPort}`;
  const poller: PollerProcess = {
    child,
    workerId,
    stderr: () => stderr,
    metricsPort,
    logs,
    metrics: async () => (await fetch(`${base}/metrics`)).text(),
    async terminate(timeoutMs = 20_000) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, timeoutMs))) throw new Error(`${workerId} did not exit`);
      children.delete(child);
      return child.exitCode;
    },
    async kill() {
      child.kill('SIGKILL');
      await waitForExit(child, 5000);
      children.delete(child);
    },
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
  };
  if (options.waitReady !== false) {
    const state = await waitUntil(
      async () => {
        if (child.exitCode !== null) return 'exited';
        const res = await fetch(`${base}/healthz/ready`);
        return res.status === 200 ? 'ready' : undefined;
      },
      `${workerId} ready`,
      // Boot (config, migrations check, upstream connects) takes ~2 s alone; under a loaded
      // 2-core run it has taken over 20 s. Not an assertion: only how long to wait.
      60_000,
      100,
    );
    if (state === 'exited') throw new Error(`poller ${workerId} exited at start: ${stderr}`);
  }
  return poller;
}

/** The value of one sample of a Prometheus text exposition (0 when absent). */
export function metricValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Demo servers a poller spawned over stdio

/** PIDs of the demo servers a poller spawned over stdio (its direct children). */
export function stdioChildrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (ppid === parent && cmdline.includes(DEMO_SERVER_MAIN)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/**
 * Registers an afterEach that stops this file's processes, then SIGKILLs the stdio demo servers
 * put in the returned set: grandchildren of jest, which stopAllProcesses does not know.
 */
export function useStdioChildren(): Set<number> {
  const pids = new Set<number>();
  afterEach(async () => {
    await stopAllProcesses();
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone with its poller.
      }
    }
    pids.clear();
  });
  return pids;
}
