// Guards against abort listeners piling up on a transport's shared signal (one per request),
// while an abort of that signal still stops a response body being streamed.
import { getEventListeners } from 'node:events';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { signalIsolatingFetch } from './signal-isolating.fetch';

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      return; // never ends: only an abort stops the reader
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
