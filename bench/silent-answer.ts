/**
 * An answer that stays silent, read through the poller's upstream fetch (`upstreamFetch`) on
 * Node's `fetch` and on the gateway's HTTP client at once: a loopback server sends an SSE answer's
 * headers, then its one event SILENCE_S seconds later (310 by default, past undici's 300 s body
 * timeout). Prints when each client failed or read the event. Not part of `npm run bench` (it
 * waits the whole silence): `node dist/bench/silent-answer.js [SILENCE_S]`. docs/connections.md,
 * "The HTTP client", says why it matters: a held sync call's answer is silent until its result.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@app/config';
import { upstreamFetch } from '@app/upstream';

async function main(): Promise<void> {
  const silenceMs = Number(process.argv[2] ?? 310) * 1000;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    setTimeout(() => res.end('data: late\n\n'), silenceMs);
  });
  // The server's own timeouts must not end the exchange first.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const startedAt = Date.now();
  const read = async (name: string, base?: FetchLike): Promise<void> => {
    const fetchLike = upstreamFetch(
      { name: 'silent', maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES },
      undefined,
      base,
    );
    const seconds = (): string => ((Date.now() - startedAt) / 1000).toFixed(1);
    try {
      const text = await (await fetchLike(url, { method: 'POST', body: '{}' })).text();
      console.log(`${name}: read ${JSON.stringify(text)} after ${seconds()} s`);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? '';
      console.log(`${name}: failed after ${seconds()} s: ${(error as Error).message} ${cause}`);
    }
  };
  console.log(`an SSE answer silent for ${silenceMs / 1000} s, both clients at once`);
  await Promise.all([read("Node's fetch", fetch), read("the gateway's HTTP client")]);
  server.closeAllConnections();
  server.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
