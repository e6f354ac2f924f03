// Shared harness for demo-server tests: real child processes, SDK clients, deadline polling.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { demoStdioCommand, stopAllProcesses } from '../helpers/processes';
import { useProcesses } from '../helpers/process-scope';

const clients = new Set<Client>();

/**
 * Registers the fixture of a demo-server test file, at its top level: the file's process scope,
 * in which the demo servers a test starts stop after it, and an afterEach that closes the clients
 * the test opened (a stdio client's server with it).
 */
export function useDemoProcesses(): void {
  useProcesses({ perTest: true });
  afterEach(() => cleanupAll());
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
  const transport = new StdioClientTransport({
    ...demoStdioCommand(args),
    env: { PATH: process.env.PATH ?? '', ...env },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'demo-test', version: '1.0.0' });
  clients.add(client);
  await client.connect(transport);
  return { client, transport };
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
  return stopAllProcesses();
}
