// The upstream HTTP client answers as fetch does for the gateway's requests: bodies streamed as
// they come, aborts and dropped connections failing with fetch's errors, gzip decoded, redirects
// as asked, idle connections reused; against a real server on loopback.
import { execFileSync } from 'node:child_process';
import { getEventListeners, getMaxListeners, once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AddressInfo, createServer as createTcpServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { provablyNotSent } from '../failure.classifier';
import { httpClient, httpFetch } from './http.fetch';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

let server: Server;
let base: string;
let handler: Handler;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => handler(req, res, body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const decoder = new TextDecoder();

it('sends the JSON-RPC POST as given and streams an SSE answer event by event', async () => {
  let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
  let finish = (): void => undefined;
  handler = (req, res, body) => {
    seen = { method: req.method, headers: req.headers, body };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's-1' });
    res.write('data: first\n\n');
    finish = () => res.end('data: second\n\n');
  };
  const sent = '{"jsonrpc":"2.0","id":1,"method":"tools/call"}';
  const response = await httpFetch(`${base}/mcp`, {
    method: 'POST',
    headers: new Headers({ 'content-type': 'application/json', 'mcp-protocol-version': 'x' }),
    body: sent,
  });
  expect(seen).toMatchObject({ method: 'POST', body: sent });
  expect(seen.headers).toMatchObject({
    'content-type': 'application/json',
    'mcp-protocol-version': 'x',
    'content-length': String(sent.length),
    'accept-encoding': 'gzip, deflate',
  });
  expect([response.status, response.ok, response.headers.get('mcp-session-id')]).toEqual([
    200,
    true,
    's-1',
  ]);
  const reader = response.body!.getReader();
  // The first event arrives while the server still holds the answer open.
  expect(decoder.decode((await reader.read()).value)).toBe('data: first\n\n');
  finish();
  expect(decoder.decode((await reader.read()).value)).toBe('data: second\n\n');
  expect((await reader.read()).done).toBe(true);
});

it('answers a 202 and a 204 without a body, and an error status with its body', async () => {
  handler = (req, res) => {
    const status = Number(req.url?.slice(1));
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(status === 204 ? undefined : status === 202 ? '' : '{"error":"nope"}');
  };
  expect((await httpFetch(`${base}/204`, { method: 'DELETE' })).body).toBeNull();
  expect(await (await httpFetch(`${base}/202`, { method: 'POST', body: '{}' })).text()).toBe('');
  const failed = await httpFetch(`${base}/404`);
  expect([failed.status, failed.ok, await failed.json()]).toEqual([404, false, { error: 'nope' }]);
});

it('decodes a gzip answer', async () => {
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(gzipSync('{"zipped":true}'));
  };
  expect(await (await httpFetch(base)).json()).toEqual({ zipped: true });
});

it('keeps one connection for requests one after another', async () => {
  const sockets = new Set<unknown>();
  handler = (req, res) => {
    sockets.add(req.socket);
    res.end('ok');
  };
  for (let i = 0; i < 5; i += 1) await (await httpFetch(base)).text();
  expect(sockets.size).toBe(1);
});

it('fails with the abort reason, before the answer and while its body streams', async () => {
  handler = (req, res) => {
    if (req.url === '/slow') return; // never answers
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n'); // never ends
  };
  const early = new AbortController();
  const pending = httpFetch(`${base}/slow`, { signal: early.signal });
  const reason = new Error('call deadline');
  early.abort(reason);
  await expect(pending).rejects.toBe(reason);

  const late = new AbortController();
  const response = await httpFetch(`${base}/stream`, { signal: late.signal });
  const reader = response.body!.getReader();
  await reader.read();
  late.abort(reason);
  await expect(reader.read()).rejects.toBe(reason);
});

/** The signal's listener limit; Node 20's getMaxListeners refuses a signal whose limit is 0. */
function listenerLimit(signal: AbortSignal): number {
  try {
    return getMaxListeners(signal);
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_INVALID_ARG_TYPE') return 0;
    throw error;
  }
}

it("shares one signal among a server's 16 calls in flight without Node's leak warning", async () => {
  const held: ServerResponse[] = [];
  let allIn = (): void => undefined;
  const arrived = new Promise<void>((resolve) => (allIn = resolve));
  handler = (_req, res) => {
    held.push(res);
    if (held.length === 16) allIn();
  };
  // As the SDK's transport does: one signal for every request of a session.
  const shared = new AbortController();
  const pending = Array.from({ length: 16 }, () =>
    httpFetch(base, { method: 'POST', body: '{}', signal: shared.signal }),
  );
  await arrived;
  const inFlight = getEventListeners(shared.signal, 'abort').length;
  expect(inFlight).toBe(16);
  // Node warns of a leak ("MaxListenersExceededWarning", on stderr) when a target's listeners
  // outnumber its limit, unless the limit is 0. Jest's process object does not see the warning
  // event, so that rule is checked instead.
  const limit = listenerLimit(shared.signal);
  expect(limit === 0 || limit >= inFlight).toBe(true);
  for (const res of held) res.end('ok');
  const bodies = await Promise.all(pending.map(async (p) => (await p).text()));
  expect(bodies).toEqual(held.map(() => 'ok'));
  // Each listener goes with its answer: the count follows the calls in flight, not their total.
  expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
});

it('fails as fetch fails when nothing listens, and when the answer is cut off', async () => {
  const closed = createTcpServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const refused = await httpFetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(TypeError);
  expect((refused as Error).message).toBe('fetch failed');
  expect(provablyNotSent(refused)).toBe(true);

  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: partial\n\n', () => res.socket?.destroy());
  };
  const response = await httpFetch(base);
  await expect(response.text()).rejects.toThrow('terminated');
});

it('fails an answer no Response can hold, as fetch does, without throwing in its listener', async () => {
  const odd = createTcpServer((socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 999 Odd\r\ncontent-length: 2\r\n\r\nno'));
  });
  odd.listen(0, '127.0.0.1');
  await once(odd, 'listening');
  try {
    const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}/`;
    await expect(httpFetch(url)).rejects.toThrow('fetch failed');
  } finally {
    await new Promise((resolve) => odd.close(resolve));
  }
});

it('answers a redirect as asked: as it is, an error, or followed', async () => {
  handler = (req, res, body) => {
    if (req.url === '/old') {
      res.writeHead(307, { location: '/new' });
      res.end();
    } else {
      res.end(`${req.method} ${req.url} ${body}`);
    }
  };
  const manual = await httpFetch(`${base}/old`, { method: 'POST', body: 'x', redirect: 'manual' });
  expect([manual.status, manual.headers.get('location')]).toEqual([307, '/new']);
  await expect(httpFetch(`${base}/old`, { redirect: 'error' })).rejects.toThrow('fetch failed');
  const followed = await httpFetch(`${base}/old`, { method: 'POST', body: 'x' });
  expect(await followed.text()).toBe('POST /new x');
});

it('speaks TLS to an https URL and, as fetch, refuses a certificate nobody vouches for', async () => {
  // A self-signed certificate made for this test (openssl, as Debian ships it).
  const dir = mkdtempSync(join(tmpdir(), 'http-fetch-tls-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const tls = createTlsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    (_req, res) => res.end('secret'),
  );
  rmSync(dir, { recursive: true, force: true });
  tls.listen(0, '127.0.0.1');
  await once(tls, 'listening');
  try {
    const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/`;
    const refused = await httpFetch(url).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as Error).message).toBe('fetch failed');
    expect(((refused as Error).cause as { code?: string }).code).toBe(
      'DEPTH_ZERO_SELF_SIGNED_CERT',
    );
  } finally {
    tls.closeAllConnections();
    await new Promise((resolve) => tls.close(resolve));
  }
});

it('leaves a body it does not send itself to fetch', async () => {
  handler = (req, res, body) => res.end(`${String(req.headers['content-type'])} ${body}`);
  const response = await httpFetch(base, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  expect(await response.text()).toBe(
    'application/x-www-form-urlencoded;charset=UTF-8 grant_type=client_credentials',
  );
});

it("fails the body with a watch hook's own error instead of throwing in the socket's listener", async () => {
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: first\n\n', () => setImmediate(() => res.destroy()));
  };
  const hookFailure = new Error('the hook failed');
  const watched = httpClient({
    watch: () => ({
      broken: () => {
        throw hookFailure;
      },
    }),
  });
  const response = await watched(`${base}/cut`);
  await expect(response.text()).rejects.toBe(hookFailure);
  const refusing = httpClient({
    watch: () => ({
      check: () => {
        throw hookFailure;
      },
    }),
  });
  await expect((await refusing(`${base}/cut`)).text()).rejects.toBe(hookFailure);
});
