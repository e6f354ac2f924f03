// Guards against one broken answer stream on a pooled Streamable HTTP session tearing the whole
// session down and failing every concurrent request on it as "maybe sent".
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamRequestBrokenError } from '@app/upstream';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { closePools, demoHttp, openPool } from './mcp-test.helper';

const CUT_MARKER = 'cut-this-answer';
let proxy: Server | undefined;

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });
afterEach(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  proxy = undefined;
});

/**
 * A loopback proxy in front of the demo server that forwards everything, except that it cuts
 * the answer to a request whose body carries CUT_MARKER after its first chunk: the socket is
 * destroyed mid-stream, as a failing proxy or network would.
 */
async function cuttingProxy(target: string): Promise<string> {
  const upstream = new URL(target);
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const cut = body.includes(CUT_MARKER);
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('data', (chunk: Buffer) => {
            res.write(chunk);
            if (cut) {
              answer.destroy();
              res.socket?.destroy();
            }
          });
          answer.on('end', () => res.end());
        },
      );
      forwarded.on('error', () => res.socket?.destroy());
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

it('fails only the request whose answer broke; its siblings finish and the session stays', async () => {
  const server = await startDemoServer();
  const { pool, recorder } = openPool([demoHttp('proxied', await cuttingProxy(server.url))]);
  const session = await pool.session('proxied');
  const sessionId = session.sessionId;
  let progressed = 0;
  const call = (tag: string) =>
    session
      .callTool(
        'demo_slow',
        { duration_ms: 1500, tag },
        { idempotent: false, timeoutMs: 20_000, onProgress: () => (progressed += 1) },
      )
      .then(
        (result) => ({ ok: result }),
        (error: unknown) => ({ error }),
      );
  const siblings = [call('sibling-1'), call('sibling-2')];
  await waitUntil(() => (progressed >= 2 ? true : undefined), 'the siblings running upstream');
  const cut = await call(CUT_MARKER);
  expect('error' in cut && cut.error).toBeInstanceOf(UpstreamRequestBrokenError);
  expect((cut as { error: UpstreamRequestBrokenError }).error.maybeSent).toBe(true);
  for (const outcome of await Promise.all(siblings)) {
    expect(outcome).toEqual({ ok: expect.objectContaining({}) as unknown });
    expect('ok' in outcome && outcome.ok.isError).toBeFalsy();
  }
  // The session was never torn down: same session, no reconnect, still answering.
  expect(recorder.reconnects.filter((r) => r.server === 'proxied')).toEqual([]);
  expect(session.sessionId).toBe(sessionId);
  await expect(session.request('ping', {}, { idempotent: true })).resolves.toBeDefined();
});
