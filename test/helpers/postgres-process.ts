import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'pg';
import { Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { openProcessScope, processScope } from './process-scope';
import { stopAllProcesses, stopProcess } from './processes';

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
  const scope = processScope('an embedded Postgres (startPostgresProcess)');
  const child = spawn(process.execPath, [MAIN, dataDir, ...(port ? [String(port)] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // After the pollers and APIs that use it.
  scope?.child(child, 'an embedded Postgres', { graceMs: 20_000, last: true, tail: true });
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

/** A test file's own migrated Postgres server, which its tests stop and start again. */
export interface OwnPostgres {
  /** `postgres://…/postgres` of the server (the same across a restart). */
  readonly url: string;
  /** A pool on the running server, new after each restart. */
  readonly db: Database;
  /** Closes the pool and stops the server (SIGTERM); the data is kept. */
  stop(): Promise<void>;
  /** Starts the server again on the same data and port, with a new pool. */
  restart(): Promise<void>;
}

/**
 * Registers a file's own Postgres (beside the run's shared one, which its tests must not stop):
 * started and migrated in beforeAll under .data/pg-<label>-<pid>, stopped and removed in afterAll
 * after every process the helpers started. `poolSize` sizes the file's pool. It opens the file's
 * process scope (process-scope.ts), as a fixture does.
 */
export function useOwnPostgres(label: string, poolSize: number): OwnPostgres {
  openProcessScope();
  // Under .data like the run's own server: the postgres OS user must be able to reach it (root's
  // 0700 temp directories are not).
  const dataDir = join(ROOT, '.data', `pg-${label}-${process.pid}`, 'pg');
  let server: PostgresProcess | undefined;
  let pool: Pool | undefined;
  const connect = (url: string): void => {
    pool = new Pool({ connectionString: url, max: poolSize });
    // The server is stopped under it on purpose: an idle client's 57P01 must not be unhandled.
    pool.on('error', () => undefined);
  };
  beforeAll(async () => {
    server = await startPostgresProcess(dataDir);
    await migrateDatabase(server.url, MIGRATIONS, `${label}-test`);
    connect(server.url);
  });
  afterAll(async () => {
    await stopAllProcesses();
    await pool?.end().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  });
  const running = (): PostgresProcess => {
    if (!server) throw new Error('the own Postgres runs from beforeAll on');
    return server;
  };
  return {
    get url() {
      return running().url;
    },
    get db() {
      if (!pool) throw new Error('the own Postgres runs from beforeAll on');
      return new Database(pool);
    },
    async stop() {
      await pool?.end();
      await running().stop();
    },
    async restart() {
      server = await startPostgresProcess(dataDir, running().port);
      connect(server.url);
    },
  };
}
