import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '@app/dev-db';
import { stopChild } from './poller-harness';

const API_MAIN = join(__dirname, '..', '..', 'apps', 'api', 'main.js');

export interface RunningApi {
  url: string;
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The real API (dist/apps/api/main.js) as deployed: JSON logs at info, production mode, no
 * per-user submit limit (a benchmark is one user offering thousands of submits). With
 * BENCH_CPU_PROF=<dir> it runs under `node --cpu-prof` (the profile is written at its exit).
 * Ready is the "api listening" line, as the start-cost benchmark has always timed it; with a
 * `LOG_LEVEL` in `env` that hides it (`warn`, for an A/B of what the access line costs), ready is
 * `GET /healthz/live` answering 200 on the port chosen here.
 */
export async function startApi(
  databaseUrl: string,
  env: Record<string, string> = {},
  main = API_MAIN,
): Promise<RunningApi> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), main],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        METRICS_PORT: '0',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        SUBMIT_RATE_LIMIT_PER_MINUTE: '0',
        NODE_ENV: 'production',
        ...env,
      },
      // stdout carries a log line per request: read and dropped, as a log shipper would.
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const quiet = !['trace', 'debug', 'info'].includes(env.LOG_LEVEL ?? 'info');
  try {
    await (quiet ? answersLive(url, child) : printsListening(child));
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { url, child, pid: child.pid!, stop: () => stopChild(child) };
}

const START_TIMEOUT_MS = 30_000;

function printsListening(child: ChildProcess): Promise<void> {
  const lines = createInterface({ input: child.stdout! });
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the API did not start')), START_TIMEOUT_MS);
    const onLine = (line: string): void => {
      if (!line.includes('api listening on port')) return;
      clearTimeout(timer);
      // readline goes on reading the later lines, dropped, as a log shipper would.
      lines.off('line', onLine);
      resolve();
    };
    lines.on('line', onLine);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error('the API exited'));
    });
  });
}

async function answersLive(url: string, child: ChildProcess): Promise<void> {
  child.stdout!.resume();
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('the API exited');
    const live = await fetch(`${url}/healthz/live`).then(
      (response) => response.ok,
      () => false,
    );
    if (live) return;
    if (Date.now() > deadline) throw new Error('the API did not start');
    await sleep(20);
  }
}
