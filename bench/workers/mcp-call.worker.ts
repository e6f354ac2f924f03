/**
 * One MCP client process for the upstream-fetch benchmark: the MCP SDK's Client over its
 * Streamable HTTP transport, with the fetch the poller builds (`upstreamFetch`: the body wrapper
 * and the Retry-After check around a base fetch), calling the demo server's `demo_echo` in a loop.
 * The base is Node's `fetch` or the gateway's HTTP client (CLIENT_FETCH=node|gateway); between
 * `go` and the last call it counts this process's CPU. Configured by environment (it is spawned
 * by upstream-fetch.bench.ts): DEMO_SERVER_URL, CLIENT_FETCH, CALLS, CONCURRENCY.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@app/config';
import { upstreamFetch } from '@app/upstream';
import { nextParentMessage, runWorker, send } from '../lib/ipc';

/** Calls before `ready`: connections open and the code paths compiled, as in a running poller. */
const WARM_UP_CALLS = 300;

runWorker(async () => {
  // The gateway's HTTP client is upstreamFetch's default base.
  const base: FetchLike | undefined = process.env.CLIENT_FETCH === 'gateway' ? undefined : fetch;
  const calls = Number(process.env.CALLS ?? 2000);
  const concurrency = Number(process.env.CONCURRENCY ?? 4);
  const transport = new StreamableHTTPClientTransport(new URL(process.env.DEMO_SERVER_URL ?? ''), {
    fetch: upstreamFetch(
      { name: 'demo', maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES },
      undefined,
      base,
    ),
  });
  const client = new Client({ name: 'bench-mcp-call', version: '1' });
  await client.connect(transport);
  const call = async (i: number): Promise<void> => {
    const result = await client.callTool({ name: 'demo_echo', arguments: { text: `call ${i}` } });
    if (result.isError) throw new Error(`demo_echo failed: ${JSON.stringify(result.content)}`);
  };
  const loop = async (count: number): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < count) await call(next++);
      }),
    );
  };
  await loop(WARM_UP_CALLS);
  send({ type: 'ready' });
  await nextParentMessage('go');
  const startedAt = Date.now();
  const cpu = process.cpuUsage();
  await loop(calls);
  const used = process.cpuUsage(cpu);
  const endedAt = Date.now();
  await client.close();
  send({
    type: 'done',
    startedAt,
    endedAt,
    processed: calls,
    lost: 0,
    cpuMicros: used.user + used.system,
  });
});
