import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { freePort } from '@app/dev-db';
import { DEMO_ORDINARY_TOOLS, writeServersFile } from '../../test/helpers/processes';
import { DEMO_SERVER_MAIN, POLLER_MAIN } from './poller-gate';
import { sleep } from './stats';

export interface Running {
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

export interface RunningDemo extends Running {
  /** The MCP endpoint (`<printed URL>/mcp`), as DEMO_SERVER_URL wants it. */
  url: string;
}

export interface RunningPoller extends Running {
  metricsUrl: string;
}

/**
 * The demo server over Streamable HTTP on a free port; resolves once it prints its URL. With
 * `jsonResponse` it answers each POST with one JSON body, without it with an SSE stream.
 */
export async function startDemoServer(
  jsonResponse = false,
  main = DEMO_SERVER_MAIN,
): Promise<RunningDemo> {
  const args = [main, '--transport', 'http', '--port', '0'];
  if (jsonResponse) args.push('--json-response');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('demo server did not start in 20 s')), 20_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(`${match[1]}/mcp`);
      }
    });
    child.once('exit', (code) => reject(new Error(`demo server exited (${code})`)));
  });
  return { child, pid: child.pid!, url, stop: () => stopChild(child) };
}

/** A toolset file for the demo server's ordinary contract, like deploy/local/mcp-servers.json. */
export function writeToolsetFile(maxConcurrentCalls: number, callTimeoutMs = 4_000): string {
  return writeServersFile({
    demo: {
      url: '${DEMO_SERVER_URL}',
      connectTimeoutMs: 1_000,
      callTimeoutMs,
      maxConcurrentCalls,
      taskToolsets: [{ name: 'demo-ordinary', ...DEMO_ORDINARY_TOOLS }],
    },
  });
}

/**
 * The settings of a poller whose start is measured (start-cost, start-ab): the production lease
 * and poll interval, 16 slots; what it claims does not matter, as it claims nothing.
 */
export const START_MEASURED_POLLER = {
  leaseMs: 30_000,
  pollIntervalMs: 1_000,
  minPollIntervalMs: 100,
  slots: 16,
} as const;

export interface PollerEnv {
  databaseUrl: string;
  demoUrl: string;
  toolsetFile: string;
  leaseMs: number;
  pollIntervalMs: number;
  minPollIntervalMs: number;
  slots: number;
  /** Node flags for the poller, e.g. the heap cap the deployment sets. */
  nodeOptions?: string;
  /** The file to run: the bundle (default) or another build of the poller. */
  main?: string;
  /** Further settings for this poller (e.g. UPSTREAM_PUSH). */
  env?: Record<string, string>;
}

/**
 * The real poller (dist/apps/poller/main.js); resolves once /healthz/ready answers 200, asked
 * every `readyPollMs`.
 */
export async function startPoller(env: PollerEnv, readyPollMs = 200): Promise<RunningPoller> {
  const port = await freePort();
  // BENCH_CPU_PROF=<dir>: the poller runs under `node --cpu-prof` (written when it stops).
  const profileDir = process.env.BENCH_CPU_PROF;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, env.main ?? POLLER_MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: env.databaseUrl,
      DEMO_SERVER_URL: env.demoUrl,
      MCP_SERVERS_FILE: env.toolsetFile,
      METRICS_PORT: String(port),
      LEASE_MS: String(env.leaseMs),
      POLL_INTERVAL_MS: String(env.pollIntervalMs),
      MIN_POLL_INTERVAL_MS: String(env.minPollIntervalMs),
      WORKER_SLOTS: String(env.slots),
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: env.nodeOptions ?? '',
      ...env.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const metricsUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`poller exited (${child.exitCode}) at start`);
    const ok = await fetch(`${metricsUrl}/healthz/ready`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('poller not ready within 30 s');
    }
    await sleep(readyPollMs);
  }
  return { child, pid: child.pid!, metricsUrl, stop: () => stopChild(child) };
}

/** SIGTERM, then SIGKILL after 10 s: a benchmark never leaves a process behind. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command, field 3 is the state; utime and stime are fields 14 and 15 of the line.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident set size in MB, from /proc/<pid>/status (VmRSS, kB). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** Cumulative buckets (le → count) of a Prometheus histogram, summed over label sets. */
export async function scrapeHistogram(
  metricsUrl: string,
  name: string,
): Promise<Map<number, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (!le) continue;
    const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return buckets;
}

/**
 * Quantile from the difference of two cumulative histograms: the upper bound of the first bucket
 * whose count reaches q of the total (so the figure is "at most", at bucket resolution).
 */
export function histogramQuantile(
  before: Map<number, number>,
  after: Map<number, number>,
  q: number,
): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total =
    (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return Number.NaN;
  for (const bound of bounds) {
    const count = (after.get(bound) ?? 0) - (before.get(bound) ?? 0);
    if (count >= q * total) return bound;
  }
  return Number.POSITIVE_INFINITY;
}
