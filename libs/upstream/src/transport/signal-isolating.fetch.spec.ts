// Guards against abort listeners piling up on a transport's shared signal (one per request),
// while an abort of that signal still stops a response body being streamed; and that both ways
// of watching a body (the gateway client's own stream, a second stream around another fetch's)
// bound each message and report a broken answer, but not an abort or a cancel.
import { getEventListeners } from 'node:events';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { MessageTooLargeError } from './message-bound';
import { type RequestId, signalIsolatingFetch } from './signal-isolating.fetch';

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      return; // never ends: only an abort stops the reader
    }
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n', () => setImmediate(() => res.destroy()));
      return; // the connection drops before the answer's end
    }
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${'x'.repeat(4096)}\n\n`);
      return;
    }
    res.writeHead(req.url === '/empty' ? 202 : 200, { 'content-type': 'application/json' });
    res.end(req.url === '/empty' ? undefined : '{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('leaves no listener on the shared signal after hundreds of requests', async () => {
  const shared = new AbortController();
  const isolated = signalIsolatingFetch();
  for (let i = 0; i < 300; i += 1) {
    const response = await isolated(`${base}/${i % 3 === 0 ? 'empty' : 'json'}`, {
      signal: shared.signal,
    });
    await response.text();
  }
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
});

it('the unwrapped fetch does pile them up (the failure this prevents)', async () => {
  const shared = new AbortController();
  for (let i = 0; i < 20; i += 1) {
    const response = await fetch(`${base}/json`, { signal: shared.signal });
    await response.text();
  }
  expect(getEventListeners(shared.signal, 'abort').length).toBeGreaterThan(10);
});

it('an abort of the shared signal still ends a streaming body, then lets go of it', async () => {
  const shared = new AbortController();
  const response = await signalIsolatingFetch()(`${base}/stream`, { signal: shared.signal });
  const reader = response.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain('first');
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
  shared.abort(new Error('transport closed'));
  await expect(reader.read()).rejects.toThrow();
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
});

describe.each<[string, FetchLike | undefined]>([
  ['the gateway HTTP client', undefined],
  ["Node's fetch, bridged", fetch],
])('a body watched through %s', (_name, client) => {
  const post = { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'm' }) };

  it('fails an answer with a message over the bound, and tells the POST it broke', async () => {
    const broken: Array<[unknown, RequestId[]]> = [];
    const bounded = signalIsolatingFetch(client, (e, ids) => broken.push([e, ids]), 1024);
    const response = await bounded(`${base}/big`, post);
    await expect(response.text()).rejects.toBeInstanceOf(MessageTooLargeError);
    expect(broken).toHaveLength(1);
    expect(broken[0][0]).toBeInstanceOf(MessageTooLargeError);
    expect(broken[0][1]).toEqual([7]);
  });

  it('reads an answer within the bound', async () => {
    const response = await signalIsolatingFetch(client, undefined, 8192)(`${base}/big`, post);
    expect(await response.text()).toHaveLength(4096 + 8);
  });

  it('tells a POST whose answer was cut off, with its request IDs', async () => {
    const broken: RequestId[][] = [];
    const watched = signalIsolatingFetch(client, (_e, ids) => broken.push(ids));
    const response = await watched(`${base}/cut`, post);
    await expect(response.text()).rejects.toThrow();
    expect(broken).toEqual([[7]]);
  });

  it('tells nothing when the request was aborted or its body cancelled', async () => {
    const broken: unknown[] = [];
    const watched = signalIsolatingFetch(client, (e) => broken.push(e));
    const shared = new AbortController();
    const aborted = await watched(`${base}/stream`, { ...post, signal: shared.signal });
    const reader = aborted.body!.getReader();
    await reader.read();
    shared.abort(new Error('lease lost'));
    await expect(reader.read()).rejects.toThrow('lease lost');
    const cancelled = await watched(`${base}/stream`, post);
    await cancelled.body!.cancel();
    expect(broken).toEqual([]);
  });
});
