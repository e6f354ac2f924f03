import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiHarness, ApiProcess, apiKeyFor, startApi, startApiProcess } from '../helpers/api';
import { useFixture } from '../helpers/fixture';
import { request2026, type Request2026Options } from '../helpers/mcp-2026';
import { NodeProcess, startNode } from '../helpers/node-process';
import { DEMO_ORDINARY_TOOLS, DemoServerProcess, startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

/** The demo toolsets behind the front door in these tests, as an mcpServers file lists them. */
export const DEMO_TOOLSETS = [
  {
    name: 'demo-ordinary',
    ...DEMO_ORDINARY_TOOLS,
    mcp: { toolName: 'report', companionTools: true },
  },
  {
    name: 'demo-native',
    contract: 'mcp-tasks',
    tool: 'demo_task_required',
    mcp: { taskMode: 'required' },
  },
  { name: 'demo-sync', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60000 },
  {
    name: 'demo-hidden',
    contract: 'sync-call',
    tool: 'demo_echo',
    mcp: { expose: false },
  },
  {
    name: 'demo-forbidden',
    contract: 'mcp-tasks',
    tool: 'demo_task_optional',
    mcp: { taskMode: 'forbidden', toolName: 'quick' },
  },
];

/** The upstream server's name in the mcpServers file (never shown to API callers). */
export const UPSTREAM_SERVER = 'fd-upstream';

/** The API, the demo server over HTTP and real pollers, with every demo toolset available. */
export interface FrontDoor {
  api: ApiHarness;
  demo: DemoServerProcess;
  pollers: NodeProcess[];
  serversFile: string;
  keys: Record<string, string>;
  /** Starts one more poller on the same config. */
  addPoller(): NodeProcess;
  /** Starts one more API replica on the same database (`env` overrides settings). */
  addApi(env?: Record<string, string>): Promise<ApiProcess>;
  close(): Promise<void>;
}

export interface FrontDoorOptions {
  pollers?: number;
  apiEnv?: Record<string, string>;
  toolsets?: unknown[];
  /** Extra fields of the upstream server's entry (e.g. protocolVersion). */
  server?: Record<string, unknown>;
  /** Extra environment of every poller (e.g. a short LEASE_MS). */
  pollerEnv?: Record<string, string>;
  /** Demo server flags (e.g. `--strict-2026` for an upstream that refuses initialize). */
  demoArgs?: string[];
}

/**
 * Registers a test file's front door: started in beforeAll, closed in afterAll with every poller
 * and API replica it started. The value it returns is usable from beforeAll on.
 */
export function useFrontDoor(options: FrontDoorOptions = {}): FrontDoor {
  return useFixture(
    'the front door',
    () => startFrontDoor(options),
    (fd) => fd.close(),
  );
}

async function startFrontDoor(options: FrontDoorOptions = {}): Promise<FrontDoor> {
  const api = await startApi(options.apiEnv);
  const demo = await startDemoServer(options.demoArgs);
  const demoUrl = demo.url;
  const dir = mkdtempSync(join(tmpdir(), 'mtg-front-door-'));
  const serversFile = join(dir, 'mcp-servers.json');
  const toolsets = options.toolsets ?? DEMO_TOOLSETS;
  writeFileSync(
    serversFile,
    JSON.stringify({
      mcpServers: {
        [UPSTREAM_SERVER]: { url: `${demoUrl}/mcp`, ...options.server, taskToolsets: toolsets },
      },
    }),
  );
  const pollers: NodeProcess[] = [];
  const addPoller = (): NodeProcess => {
    const poller = startNode('apps/poller/main.js', [], {
      DATABASE_URL: api.db.url,
      MCP_SERVERS_FILE: serversFile,
      METRICS_PORT: '0',
      POLL_INTERVAL_MS: '200',
      MIN_POLL_INTERVAL_MS: '100',
      CLAIM_FALLBACK_INTERVAL_MS: '200',
      HEARTBEAT_INTERVAL_MS: '500',
      LOG_LEVEL: 'warn',
      ...options.pollerEnv,
    });
    pollers.push(poller);
    return poller;
  };
  const replicas: ApiProcess[] = [];
  const addApi = async (env: Record<string, string> = {}): Promise<ApiProcess> => {
    const replica = await startApiProcess(api.db.url, env);
    replicas.push(replica);
    return replica;
  };
  for (let i = 0; i < (options.pollers ?? 1); i++) addPoller();
  const keys = { alice: await apiKeyFor(api, 'alice'), bob: await apiKeyFor(api, 'bob') };
  await waitUntil(
    async () => {
      const dead = pollers.find((p) => p.child.exitCode !== null);
      if (dead) throw new Error(`a poller exited: ${dead.stderr.join('\n')}`);
      const res = await fetch(`${api.url}/v1/toolsets`, {
        headers: { authorization: `Bearer ${keys.alice}` },
      });
      const body = (await res.json()) as { items?: { available: boolean }[] };
      const available = body.items?.filter((t) => t.available).length;
      return available === toolsets.length ? true : undefined;
    },
    'all toolsets available',
    60_000,
  );
  return {
    api,
    demo,
    pollers,
    serversFile,
    keys,
    addPoller,
    addApi,
    async close() {
      // Teardown, not a test of the drain: a graceful stop would wait out DRAIN_TIMEOUT_MS for
      // the held calls a test leaves running (30 s by default).
      for (const poller of pollers) await poller.kill('SIGKILL');
      for (const replica of replicas) await replica.process.kill('SIGTERM');
      await demo.stop();
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One raw POST to `/mcp`: the status, the headers and the parsed body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read JSON bodies by path
type Json = any;

export async function postMcp(
  apiUrl: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; body: Json }> {
  const res = await fetch(`${apiUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

/** One SSE frame as read: its `id:` and its `data:` parsed (undefined when empty). */
export interface SseFrame {
  id?: string;
  data?: Json;
}

/**
 * A raw `GET /mcp` stream read in the background: `frames` fills as frames arrive, `status` is
 * the HTTP status; `close()` ends it.
 */
export async function openStatusStream(
  url: string,
  key: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; frames: SseFrame[]; close(): void }> {
  const abort = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${key}`, ...headers },
    signal: abort.signal,
  });
  const frames: SseFrame[] = [];
  const read = async (): Promise<void> => {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: SseFrame = {};
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) frame.id = line.slice(4);
          if (line.startsWith('data: ') && line.length > 6) frame.data = JSON.parse(line.slice(6));
        }
        if (frame.id !== undefined || frame.data !== undefined) frames.push(frame);
      }
    }
  };
  if (res.ok) read().catch(() => undefined);
  return { status: res.status, frames, close: () => abort.abort() };
}

/**
 * One 2026-07-28 request to `/mcp` as the holder of `key`: the envelope and the headers a
 * conforming client sends (request2026), then `headers`, which a test may use to override them.
 */
export function postMcp2026(
  apiUrl: string,
  key: string,
  method: string,
  params: Record<string, unknown> = {},
  options: Request2026Options & { headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: Json }> {
  const request = request2026(method, params, options);
  return postMcp(apiUrl, request.body, {
    authorization: `Bearer ${key}`,
    ...request.headers,
    ...options.headers,
  });
}
