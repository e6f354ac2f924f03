// Shared harness for demo-server tests: real child processes, SDK clients, deadline polling.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const DEMO_MAIN = join(
  __dirname,
  '..',
  '..',
  'dist',
  'apps',
  'demo-server',
  'src',
  'main.js',
);

export function assertBuilt(): void {
  if (!existsSync(DEMO_MAIN)) {
    throw new Error(`${DEMO_MAIN} is missing: build first (npx tsc -p tsconfig.build.json)`);
  }
}

/** Everything a test opened, closed by cleanupAll() in afterEach. */
const children = new Set<ChildProcess>();
const clients = new Set<Client>();

export interface HttpDemo {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (!(await waitForExit(child, 0))) {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 3000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 3000);
    }
  }
  children.delete(child);
}

/** Spawns `--transport http --port 0` and resolves once it printed its listening line. */
export async function startHttpDemo(
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<HttpDemo> {
  assertBuilt();
  const child = spawn(
    process.execPath,
    [DEMO_MAIN, '--transport', 'http', '--port', '0', ...args],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line within 10 s: ${stderr}`)),
      10_000,
    );
    child.once('exit', (code) => reject(new Error(`demo-server exited (${code}): ${stderr}`)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /^demo-server listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
  return { url, child, stop: () => stopChild(child) };
}

export async function connectHttp(
  url: string,
  headers: Record<string, string> = {},
): Promise<Client> {
  const client = new Client({ name: 'demo-test', version: '1.0.0' });
  clients.add(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

export interface StdioDemo {
  client: Client;
  transport: StdioClientTransport;
}

export async function connectStdio(
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<StdioDemo> {
  assertBuilt();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [DEMO_MAIN, '--transport', 'stdio', ...args],
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'demo-test', version: '1.0.0' });
  clients.add(client);
  await client.connect(transport);
  return { client, transport };
}

/** Polls `probe` until it returns a value other than undefined, failing at the deadline. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what} (last error: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** A JSON answer that tests index into freely; a wrong path fails the expectation, not tsc. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
export type Answer = Record<string, any>;

/** The structuredContent of a tool result, failing the test if there is none. */
export async function callStructured(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Answer> {
  const result = await call(client, name, args);
  if (!result.structuredContent)
    throw new Error(`${name} returned no structuredContent: ${JSON.stringify(result)}`);
  return result.structuredContent;
}

export function firstText(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

/** Closes every client and child a test opened; returns how many children were still running. */
export async function cleanupAll(): Promise<number> {
  await Promise.all([...clients].map((client) => client.close().catch(() => undefined)));
  clients.clear();
  const leaked = [...children].filter(
    (child) => child.exitCode === null && child.signalCode === null,
  );
  await Promise.all([...children].map((child) => stopChild(child)));
  return leaked.length;
}
