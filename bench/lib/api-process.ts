import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
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
 */
export async function startApi(
  databaseUrl: string,
  env: Record<string, string> = {},
  main = API_MAIN,
): Promise<RunningApi> {
  const profileDir = process.env.BENCH_CPU_PROF;
  const child = spawn(
    process.execPath,
    [...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), main],
    {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        PORT: '0',
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
  const lines = createInterface({ input: child.stdout });
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the API did not start')), 30_000);
    const onLine = (line: string): void => {
      const match = /api listening on port (\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        lines.off('line', onLine);
        resolve(match[1]);
      }
    };
    lines.on('line', onLine);
    child.once('exit', () => reject(new Error('the API exited')));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    child,
    pid: child.pid!,
    stop: () => stopChild(child),
  };
}
