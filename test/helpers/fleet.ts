// The fleet fixture: one test file's database, demo servers, pollers and API processes, all torn
// down after the file (or after each test) even when one of them fails to stop.
import type { ChildProcess } from 'node:child_process';
import type { Database } from '@app/persistence';
import { ApiProcess, startApiProcess } from './api';
import { createTestDatabase, TestDatabase } from './db';
import type { NodeProcess } from './node-process';
import { Processes, useProcesses } from './process-scope';
import {
  DemoServerProcess,
  PollerOptions,
  PollerProcess,
  ServerEntry,
  startDemoServer,
  startPoller,
  stopAllProcesses,
  writeServersFile,
} from './processes';

export interface Fleet {
  /** This file's own migrated database (available from beforeAll on). */
  readonly database: TestDatabase;
  /** Shorthands for `database.db` and `database.url`. */
  readonly db: Database;
  readonly url: string;
  /** A demo MCP server over Streamable HTTP (see startDemoServer). */
  demo(
    args?: string[],
    options?: Parameters<typeof startDemoServer>[1],
  ): Promise<DemoServerProcess>;
  /** A poller on this database; `servers` is written as its mcpServers file. */
  poller(
    servers: Record<string, ServerEntry> | string,
    options?: Omit<PollerOptions, 'databaseUrl' | 'serversFile'>,
  ): Promise<PollerProcess>;
  /** An API process on this database. */
  api(env?: Record<string, string>): Promise<ApiProcess>;
  /** Runs a command to its end (useProcesses' run), in the fleet's scope. */
  run: Processes['run'];
  /** A Node script of this build (startNode), stopped with the fleet. */
  node(script: string, args?: string[], env?: NodeJS.ProcessEnv): NodeProcess;
  /** Adds a process started elsewhere, stopped with the fleet; returns it. */
  track<T extends ChildProcess | NodeProcess>(process: T, graceMs?: number): T;
}

/**
 * Registers the hooks of a fleet test file and returns its fixture, opening the file's process
 * scope (process-scope.ts). With `{ perTest: true }` what a test starts, and every demo server
 * and poller, stops in afterEach; in afterAll every process of the file stops and then the
 * database is dropped, even when a stop fails.
 */
export function useFleet(options: { perTest?: boolean } = {}): Fleet {
  const processes = useProcesses(options);
  let database: TestDatabase | undefined;
  const apis = new Set<ApiProcess>();

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  if (options.perTest) afterEach(() => stopAllProcesses());
  afterAll(async () => {
    const stopping = [...apis].map((api) => api.process.kill('SIGTERM'));
    apis.clear();
    try {
      await Promise.allSettled([...stopping, stopAllProcesses(), processes.stopAll()]);
    } finally {
      await database?.drop();
    }
  });

  const fleet: Fleet = {
    get database() {
      if (!database) throw new Error('the fleet database exists from beforeAll on');
      return database;
    },
    get db() {
      return fleet.database.db;
    },
    get url() {
      return fleet.database.url;
    },
    demo: (args, demoOptions) => startDemoServer(args, demoOptions),
    poller: (servers, pollerOptions = {}) =>
      startPoller({
        ...pollerOptions,
        databaseUrl: fleet.url,
        serversFile: typeof servers === 'string' ? servers : writeServersFile(servers),
      }),
    async api(env = {}) {
      const api = await startApiProcess(fleet.url, env);
      apis.add(api);
      return api;
    },
    run: processes.run,
    node: processes.node,
    track: processes.track,
  };
  return fleet;
}
