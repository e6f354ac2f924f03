import { spawn } from 'node:child_process';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { stopProcess } from './processes';

const ROOT = join(
  __dirname,
  '..',
  '..',
  ...(basename(join(__dirname, '..', '..')) === 'dist' ? ['..'] : []),
);
const MAIN = join(ROOT, 'dist', 'test', 'helpers', 'embedded-postgres.main.js');

/** A Postgres server in a child process that a test can stop and start again on the same data. */
export interface PostgresProcess {
  /** `postgres://…/postgres` of the running server. */
  url: string;
  port: number;
  /** Stops the server cleanly (SIGTERM); the data directory is kept. */
  stop(): Promise<void>;
}

/**
 * Starts an embedded Postgres on `dataDir` (initialised on first use) in its own process.
 * Pass the previous `port` to restart the same server where clients expect it.
 */
export async function startPostgresProcess(
  dataDir: string,
  port?: number,
): Promise<PostgresProcess> {
  const child = spawn(process.execPath, [MAIN, dataDir, ...(port ? [String(port)] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`postgres did not start: ${stderr}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`postgres process exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^postgres ready (\S+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  return { url, port: Number(new URL(url).port), stop: () => stopProcess(child, 20_000) };
}
