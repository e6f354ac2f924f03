// Guards against a hung upstream (initialize or call) stalling a worker or leaking processes and descriptors.
import { UpstreamTimeoutError } from '@app/upstream';
import { waitUntil } from '../helpers/wait';
import {
  childPids,
  closePools,
  demoStdio,
  expectSettled,
  openFds,
  openPool,
  waitForState,
} from './mcp-test.helper';

afterEach(closePools);

/** The hung call's deadline: long enough that the echoes beside it finish first on a loaded box. */
const HANG_MS = 3000;

describe('deadlines', () => {
  it('ends a hung initialize at connectTimeoutMs and leaves no child or descriptor behind', async () => {
    const fds = openFds();
    const started = Date.now();
    const { pool, recorder } = openPool([
      demoStdio('hung-init', ['--slow-initialize-ms', '600000'], {
        connectTimeoutMs: 400,
        connectAttempts: 1,
      }),
    ]);
    const status = await waitForState(pool, 'hung-init', 'parked');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(380);
    // Not the 600 s initialize: a bound with room for a slow spawn (one took 2.7 s in CI).
    expect(elapsed).toBeLessThan(10_000);
    expect(status.reason).toMatch(/within 400 ms/);
    expect(recorder.transitions('hung-init', 'parked')).toHaveLength(1);
    // Still open: the torn-down attempt alone must have released its child and pipes.
    await expectSettled(fds);
  });

  it('does not delay another server while one hangs in initialize', async () => {
    // The hung connect's deadline is far past the test's own timeout: were the healthy server's
    // session made to wait for it, the test would time out. Causal, not timed: the healthy
    // server answers while the other one is still connecting (a wall-clock bound here failed
    // on a loaded CI machine, where spawning the healthy child alone took 2.7 s).
    const { pool } = openPool([
      demoStdio('hung-init', ['--slow-initialize-ms', '600000'], { connectTimeoutMs: 600_000 }),
      demoStdio('healthy'),
    ]);
    const session = await pool.session('healthy');
    const result = await session.callTool('demo_echo', { text: 'hi' }, { idempotent: true });
    expect(result.structuredContent).toEqual({ text: 'hi' });
    expect(pool.status('hung-init').state).toBe('connecting');
  });

  it('ends a hung call at its deadline without wedging the session or other servers', async () => {
    const fds = openFds();
    const { pool } = openPool([demoStdio('hangs'), demoStdio('other')]);
    const hangs = await pool.session('hangs');
    const other = await pool.session('other');
    const started = Date.now();
    let hungSettled = false;
    const hung = hangs
      .callTool('demo_slow', { fault: 'hang_call' }, { idempotent: false, timeoutMs: HANG_MS })
      .catch((error: unknown) => error)
      .finally(() => (hungSettled = true));
    // While the call hangs, both servers keep answering: both echoes come back before it ends.
    await expect(
      other.callTool('demo_echo', { text: 'a' }, { idempotent: true }),
    ).resolves.toBeDefined();
    await expect(
      hangs.callTool('demo_echo', { text: 'b' }, { idempotent: true }),
    ).resolves.toBeDefined();
    expect(hungSettled).toBe(false);
    const error = await hung;
    expect(error).toBeInstanceOf(UpstreamTimeoutError);
    expect((error as UpstreamTimeoutError).maybeSent).toBe(true);
    // Ended by its own deadline: not before it, and not long after (headroom for a loaded box).
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(HANG_MS - 20);
    expect(elapsed).toBeLessThan(HANG_MS + 5000);
    expect(pool.status('hangs').state).toBe('ready');
    expect(childPids()).toHaveLength(2);
    await closePools();
    await expectSettled(fds);
    await waitUntil(() => (childPids().length === 0 ? true : undefined), 'children gone');
  });
});
