// Guards against a call on a Streamable HTTP server that dies mid-answer waiting out its whole
// deadline (hours, for a held sync-call) instead of failing at once as possibly sent.
import { UpstreamConnectionError } from '@app/upstream';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { closePools, demoHttp, openPool } from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

it('fails an in-flight call at once when the HTTP server dies, then reconnects', async () => {
  const server = await startDemoServer();
  // No timer under 60 s: the bound below then tells the drop noticed from a timeout waited out.
  const { pool, recorder } = openPool([
    demoHttp('mortal', server.url, { connectTimeoutMs: 60_000 }),
  ]);
  const session = await pool.session('mortal');
  let progressed = false;
  const call = session
    .callTool(
      'demo_slow',
      { duration_ms: 120_000 },
      { idempotent: false, timeoutMs: 600_000, onProgress: () => (progressed = true) },
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  await waitUntil(() => (progressed ? true : undefined), 'the call to be running upstream');
  const killedAt = Date.now();
  await server.kill();
  const error = await call;
  expect(error).toBeInstanceOf(UpstreamConnectionError);
  expect((error as UpstreamConnectionError).maybeSent).toBe(true);
  // Its timeout is 600 s and the connect timeout 60 s: an end near the kill shows the drop was
  // noticed, not waited out.
  expect(Date.now() - killedAt).toBeLessThan(20_000);
  await waitUntil(
    () => recorder.reconnects.find((r) => r.server === 'mortal'),
    'the supervisor to reconnect',
  );
});
