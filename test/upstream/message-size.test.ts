// Guards against an upstream's oversized answer being read whole into the poller's memory: a
// message (a JSON answer, one SSE event, one stdio line) longer than its server's
// `maxMessageBytes` is refused as it streams in, its call fails naming the bound, and the server
// answers the next call (docs/connections.md, "Message size"). Each era and transport, against
// the real demo server; without the bound each oversized call below succeeds.
import { TransientClass, transientClass } from '@app/views';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import { closePools, demoHttp, demoStdio, openPool } from './mcp-test.helper';

const BOUND = 64 * 1024;
/** The demo's `result_size` filler: an answer of about 1 MiB. */
const BIG = 1024 * 1024;
const REFUSED = `longer than ${BOUND} bytes`;

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

const args = (resultSize: number) => ({ duration_ms: 0, result_size: resultSize });
const callOptions = { idempotent: false, timeoutMs: 10_000 };

function outcome<T>(call: Promise<T>): Promise<{ ok: T } | { error: Error }> {
  return call.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error: error as Error }),
  );
}

it('2025-11-25 over Streamable HTTP: the oversized answer fails its call; the session answers the next', async () => {
  const server = await startDemoServer();
  const { pool } = openPool([demoHttp('big', server.url, { maxMessageBytes: BOUND })]);
  const session = await pool.session('big');
  const big = await outcome(session.callTool('demo_slow', args(BIG), callOptions));
  expect('error' in big && big.error.message).toContain(REFUSED);
  // Stored as the task's last error, it reads to the consumer as its own class (docs/api.md).
  expect(transientClass((big as { error: Error }).error.message)).toBe(TransientClass.TooLarge);
  const small = await session.callTool('demo_slow', args(1000), callOptions);
  expect(small.isError).toBeFalsy();
  expect(JSON.stringify(small)).toContain('x'.repeat(1000));
});

it('2026-07-28 (a strict server): the oversized answer fails its request; the next is answered', async () => {
  const server = await startDemoServer(['--strict-2026']);
  const { pool } = openPool([
    demoHttp('big', server.url, { maxMessageBytes: BOUND, protocolVersion: '2026-07-28' }),
  ]);
  await expect(pool.taskProtocol('big')).resolves.toBe('2026-07-28');
  const session = pool.statelessSession('big');
  // The strict side's demo_echo answers with the text it is sent (twice: text and structured).
  const call = (size: number) =>
    session.request(
      'tools/call',
      { name: 'demo_echo', arguments: { text: 'x'.repeat(size) } },
      { name: 'demo_echo', idempotent: true, timeoutMs: 10_000 },
    );
  const big = await outcome(call(BIG));
  expect('error' in big && big.error.message).toContain(REFUSED);
  expect(transientClass((big as { error: Error }).error.message)).toBe(TransientClass.TooLarge);
  const small = await call(1000);
  expect(JSON.stringify(small)).toContain('x'.repeat(1000));
});

it('stdio: an oversized line ends the child; the server is started again and answers', async () => {
  const { pool, recorder } = openPool([demoStdio('big', [], { maxMessageBytes: BOUND })]);
  const session = await pool.session('big');
  const big = await outcome(session.callTool('demo_slow', args(BIG), callOptions));
  expect('error' in big).toBe(true);
  expect(recorder.logs.some((line) => JSON.stringify(line.obj).includes(REFUSED))).toBe(true);
  const again = await pool.session('big');
  const small = await again.callTool('demo_slow', args(1000), callOptions);
  expect(small.isError).toBeFalsy();
});
