// Guards connections.md requirement 6: a deliberate teardown (here the pool's shutdown) fails the
// calls in flight at once with a typed, possibly-sent error instead of leaving them to their
// own (ten-minute) deadline.
import { UpstreamConnectionError } from '@app/upstream';
import type { ServerConfig } from '@app/config';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';
import { closePools, demoHttp, demoStdio, openPool } from './mcp-test.helper';

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

const servers: [string, () => Promise<ServerConfig>][] = [
  ['stdio', () => Promise.resolve(demoStdio('busy'))],
  ['Streamable HTTP', async () => demoHttp('busy', (await startDemoServer()).url)],
];

it.each(servers)('closing the pool fails a call in flight over %s at once', async (_, config) => {
  const { pool } = openPool([await config()]);
  const session = await pool.session('busy');
  let progressed = false;
  const call = session
    .callTool(
      'demo_slow',
      { duration_ms: 600_000 },
      { idempotent: false, timeoutMs: 600_000, onProgress: () => (progressed = true) },
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  await waitUntil(() => (progressed ? true : undefined), 'the call to be running upstream');
  const closed = pool.close();
  const error = await call;
  expect(error).toBeInstanceOf(UpstreamConnectionError);
  expect((error as UpstreamConnectionError).maybeSent).toBe(true);
  expect((error as Error).message).toMatch(/connection closed/);
  await closed;
});

it('fails the call at once, before a slow teardown ends (server frozen under the DELETE)', async () => {
  const demo = await startDemoServer();
  // A teardown bounded at a minute: only the call failing first can end this test in time.
  const { pool } = openPool([demoHttp('busy', demo.url)], undefined, { closeTimeoutMs: 60_000 });
  const session = await pool.session('busy');
  let progressed = false;
  let failure: unknown;
  const call = session
    .callTool(
      'demo_slow',
      { duration_ms: 600_000 },
      { idempotent: false, timeoutMs: 600_000, onProgress: () => (progressed = true) },
    )
    .then(
      () => (failure = 'completed'),
      (error: unknown) => (failure = error),
    );
  await waitUntil(() => (progressed ? true : undefined), 'the call to be running upstream');
  demo.child.kill('SIGSTOP');
  let closed: Promise<void> | undefined;
  try {
    closed = pool.close();
    await waitUntil(() => failure, 'the call to fail while the teardown waits', 20_000);
  } finally {
    demo.child.kill('SIGCONT');
  }
  expect(failure).toBeInstanceOf(UpstreamConnectionError);
  expect((failure as Error).message).toMatch(/connection closed \(pool closed\)/);
  await call;
  await closed;
});
