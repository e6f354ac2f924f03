// Shared harness for the driver integration tests: a real demo server, the real UpstreamPool.
import { Contract, isTerminal, PermanentTaskError, type TaskSnapshot } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import {
  DriverRegistry,
  type ContractDriver,
  type DriverContext,
  type SubmitOutcome,
} from '@app/drivers';
import { UpstreamPool, type UpstreamLogger } from '@app/upstream';
import { demoStdioCommand, startDemoServer, stopAllProcesses } from '../helpers/processes';
import { useFixture } from '../helpers/fixture';
import { serverConfig } from '../helpers/server-config';
import { waitUntil } from '../helpers/wait';

export const LIMITS = { maxResultBytes: 262_144, previewChars: 2000 };
export const WORKER = 'worker-test';

const quiet: UpstreamLogger = { info() {}, warn() {}, error() {}, debug() {} };

export const ORDINARY: ToolsetConfig = {
  name: 'jobs',
  server: 'demo',
  contract: Contract.Ordinary,
  submitTool: 'demo_submit',
  statusTool: 'demo_status',
  cancelTool: 'demo_cancel',
  retryOnCrash: false,
};
export const NATIVE: ToolsetConfig = {
  name: 'native',
  server: 'demo',
  contract: Contract.McpTasks,
  tool: 'demo_task_required',
  ttlMs: 600_000,
  retryOnCrash: false,
};
export const SLOW: ToolsetConfig = {
  name: 'slow',
  server: 'demo',
  contract: Contract.SyncCall,
  tool: 'demo_slow',
  callTimeoutMs: 60_000,
  retryOnCrash: false,
};

/** The driver tests' server: one demo server, larger timeouts and slots than the default. */
function baseConfig(toolsets: ToolsetConfig[]): ServerConfig {
  return serverConfig({
    name: 'demo',
    connectTimeoutMs: 10_000,
    callTimeoutMs: 10_000,
    maxConcurrentCalls: 8,
    keepaliveIntervalMs: 60_000,
    parkedProbeMs: 300_000,
    connectAttempts: 2,
    toolsets,
  });
}

export function stdioServer(toolsets: ToolsetConfig[] = [], args: string[] = []): ServerConfig {
  return { ...baseConfig(toolsets), transport: 'stdio', ...demoStdioCommand(args) };
}

export function httpServer(url: string, toolsets: ToolsetConfig[] = []): ServerConfig {
  return { ...baseConfig(toolsets), transport: 'http', url: `${url}/mcp` };
}

const pools = new Set<UpstreamPool>();

/** A started pool over one server, closed by {@link cleanup}. */
export function startPool(server: ServerConfig): UpstreamPool {
  const pool = new UpstreamPool(
    [server],
    quiet,
    {},
    {
      reapOrphans: false,
      backoff: { initialMs: 50, maxMs: 200 },
    },
  );
  pools.add(pool);
  pool.start();
  return pool;
}

/** Closes every pool a test opened. */
export async function closePools(): Promise<void> {
  await Promise.all([...pools].map((pool) => pool.close()));
  pools.clear();
}

/** Closes every pool and demo child a test opened; returns how many children were still alive. */
export async function cleanup(): Promise<number> {
  await closePools();
  return stopAllProcesses();
}

/** A driver test file's shared upstream: the demo server over HTTP, a pool on it, one driver. */
export interface DemoDriver {
  readonly url: string;
  readonly server: ServerConfig;
  readonly pool: UpstreamPool;
  readonly driver: ContractDriver;
}

/**
 * Registers the hooks of a driver test file: from beforeAll on, a demo server over HTTP serving
 * `toolset` (its config passed through `configure`), a started pool on it and the toolset's
 * driver; afterAll closes them and fails if anything but that demo server was still running.
 */
export function useDemoDriver(
  toolset: ToolsetConfig,
  configure: (server: ServerConfig) => ServerConfig = (server) => server,
): DemoDriver {
  return useFixture(
    'the demo driver',
    async () => {
      const url = (await startDemoServer()).url;
      const server = configure(httpServer(url, [toolset]));
      const pool = startPool(server);
      return { url, server, pool, driver: registry(pool).forToolset(toolset) };
    },
    async () => expect(await cleanup()).toBe(1),
  );
}

/** A driver context for one task; `handle` fills in what a submit stored. */
export function taskContext(
  server: ServerConfig,
  toolset: ToolsetConfig,
  input: Record<string, unknown>,
  handle?: SubmitOutcome['handle'],
  extra: Partial<DriverContext> = {},
): DriverContext {
  return {
    task: {
      id: `task_${Math.random().toString(36).slice(2, 12)}`,
      input,
      remoteTaskId: handle?.remoteTaskId ?? null,
      remoteSessionId: handle?.sessionId ?? null,
      remoteProtocolVersion: handle?.protocolVersion ?? null,
      driverState: handle?.driverState ?? null,
    },
    toolset,
    server,
    workerId: WORKER,
    limits: LIMITS,
    signal: new AbortController().signal,
    ...extra,
  };
}

export function registry(pool: UpstreamPool): DriverRegistry {
  return DriverRegistry.forPort(pool);
}

/**
 * Polls until the snapshot is terminal or `stop` says so, failing at the deadline (with the last
 * snapshot seen). As the poller does, a poll that fails transiently (a timeout, a dropped
 * session) is retried until then, and one that fails permanently ends it at once.
 */
export async function pollUntil(
  poll: () => Promise<TaskSnapshot>,
  stop: (snapshot: TaskSnapshot) => boolean = (snapshot) => isTerminal(snapshot.status),
  timeoutMs = 15_000,
): Promise<{ last: TaskSnapshot; seen: TaskSnapshot[] }> {
  const seen: TaskSnapshot[] = [];
  const ended = await waitUntil(
    async (): Promise<{ last: TaskSnapshot } | { error: unknown } | undefined> => {
      let snapshot: TaskSnapshot;
      try {
        snapshot = await poll();
      } catch (error) {
        if (error instanceof PermanentTaskError) return { error };
        throw error;
      }
      seen.push(snapshot);
      return stop(snapshot) ? { last: snapshot } : undefined;
    },
    () => `a matching snapshot (last seen: ${JSON.stringify(seen.at(-1))})`,
    timeoutMs,
    100,
  );
  if ('error' in ended) throw ended.error;
  return { last: ended.last, seen };
}

/** demo_stats for one tag, read through the pool's own session. */
export async function tagStats(pool: UpstreamPool, tag: string): Promise<Record<string, unknown>> {
  const session = await pool.session('demo');
  const result = await session.callTool('demo_stats', { tag }, { idempotent: true });
  const byTag = (result.structuredContent as { by_tag: Record<string, Record<string, unknown>> })
    .by_tag;
  return byTag[tag] ?? {};
}

/** The PermanentTaskError a driver call ends with; any other outcome fails the test. */
export async function permanent(run: Promise<unknown>): Promise<PermanentTaskError> {
  const error = await run.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(PermanentTaskError);
  return error as PermanentTaskError;
}
