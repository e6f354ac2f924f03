// Shared harness for the connection-layer tests: configs, a recording logger and metric hooks,
// process and descriptor accounting, deadline polling. No mocks: everything runs for real.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import { UpstreamPool, type SupervisorState, type UpstreamPoolOptions } from '@app/upstream';
import { demoStdioCommand } from '../helpers/processes';
import { serverConfig } from '../helpers/server-config';
import { waitUntil } from '../helpers/wait';

export const FIXTURES = join(__dirname, 'fixtures');

export function demoStdio(name: string, args: string[] = [], extra: Partial<ServerConfig> = {}) {
  return serverConfig({ name, ...demoStdioCommand(args), ...extra });
}

export function demoHttp(name: string, url: string, extra: Partial<ServerConfig> = {}) {
  return serverConfig({ name, transport: 'http', url: `${url}/mcp`, ...extra });
}

/** The demo server's native-task toolset on `server` (`<server>-native`, tool demo_task). */
export function nativeToolset(server: string): ToolsetConfig {
  return {
    name: `${server}-native`,
    server,
    contract: Contract.McpTasks,
    tool: 'demo_task',
    retryOnCrash: false,
  };
}

/** The demo server's ordinary toolset on `server` (`<server>-ordinary`, submit/status/cancel). */
export function ordinaryToolset(server: string): ToolsetConfig {
  return {
    name: `${server}-ordinary`,
    server,
    contract: Contract.Ordinary,
    submitTool: 'demo_submit',
    statusTool: 'demo_status',
    cancelTool: 'demo_cancel',
    retryOnCrash: false,
  };
}

export interface LogLine {
  level: string;
  msg: string;
  obj: Record<string, unknown>;
}

/** Records logs and metric callbacks; tests wait on them instead of sleeping. */
export class Recorder {
  readonly logs: LogLine[] = [];
  readonly states: Array<{ server: string; state: SupervisorState }> = [];
  readonly reconnects: Array<{ server: string; reason: string }> = [];
  readonly durations: Array<{ server: string; operation: string; seconds: number; at: number }> =
    [];

  readonly logger = {
    info: (obj: object, msg: string) => this.log('info', obj, msg),
    warn: (obj: object, msg: string) => this.log('warn', obj, msg),
    error: (obj: object, msg: string) => this.log('error', obj, msg),
    debug: (obj: object, msg: string) => this.log('debug', obj, msg),
  };

  readonly metrics = {
    onState: (server: string, state: SupervisorState) => this.states.push({ server, state }),
    onReconnect: (server: string, reason: string) => this.reconnects.push({ server, reason }),
    onCallDuration: (server: string, operation: string, seconds: number) =>
      this.durations.push({ server, operation, seconds, at: Date.now() }),
  };

  private log(level: string, obj: object, msg: string): void {
    this.logs.push({ level, msg, obj: obj as Record<string, unknown> });
  }

  transitions(server: string, to?: string): LogLine[] {
    return this.logs.filter(
      (line) =>
        line.obj.server === server &&
        'from' in line.obj &&
        (to === undefined || line.obj.to === to),
    );
  }
}

const pools = new Set<UpstreamPool>();

/** A started pool, closed by closePools() in afterEach. */
export function openPool(
  servers: ServerConfig[],
  recorder = new Recorder(),
  options: UpstreamPoolOptions = {},
): { pool: UpstreamPool; recorder: Recorder } {
  const pool = new UpstreamPool(servers, recorder.logger, recorder.metrics, {
    processGroupDir: join(tmpdir(), `mcp-task-gateway-jest-${process.pid}`),
    backoff: { initialMs: 20, maxMs: 200 },
    ...options,
  });
  pools.add(pool);
  pool.start();
  return { pool, recorder };
}

export async function closePools(): Promise<void> {
  await Promise.all([...pools].map((pool) => pool.close()));
  pools.clear();
  await Promise.all(
    fakes.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
}

/** One JSON-RPC message a fake endpoint received. */
export interface RpcMessage {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
}

const fakes: Server[] = [];

/**
 * A loopback HTTP endpoint for answers the demo server cannot give (a 403, an old protocol
 * version, a paged tools/list): each POSTed request gets `answer(message)` as its status and
 * JSON body; notifications get 202, other methods 405. Closed by closePools().
 */
export async function fakeMcpEndpoint(
  answer: (message: RpcMessage) => { status: number; body: unknown },
): Promise<{ url: string; initializes: () => number }> {
  let initializes = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const message = JSON.parse(raw || '{}') as RpcMessage;
      if (message.method === 'initialize') initializes += 1;
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const { status, body } = answer(message);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  fakes.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, initializes: () => initializes };
}

export async function waitForState(
  pool: UpstreamPool,
  server: string,
  state: SupervisorState,
  timeoutMs = 10_000,
) {
  return waitUntil(
    () => (pool.status(server).state === state ? pool.status(server) : undefined),
    `${server} to be ${state}`,
    timeoutMs,
  );
}

export function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

/**
 * Live (non-zombie) processes whose parent is this test process. Jest's global setup may run an
 * embedded Postgres in this same process when the run is in-band: that one is not ours.
 */
export function childPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (Number(fields[1]) === process.pid && fields[0] !== 'Z' && !name.startsWith('postgres')) {
        pids.push(Number(entry));
      }
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Descriptor and child counts settle asynchronously after close: poll them down. */
export async function expectSettled(fdBaseline: number, slack = 2): Promise<void> {
  await waitUntil(
    () => (childPids().length === 0 ? true : undefined),
    `no child processes (${childPids().join(',')})`,
  );
  await waitUntil(
    () => (openFds() <= fdBaseline + slack ? true : undefined),
    `descriptors back to ${fdBaseline}+${slack} (now ${openFds()})`,
  );
}

/** Calls a demo tool on a plain HTTP endpoint (admin routes are not MCP). */
export async function adminPost(url: string, path: string): Promise<unknown> {
  const response = await fetch(`${url}${path}`, { method: 'POST' });
  return response.json();
}
