// Guards against leaks across reconnects: child processes, descriptors, timers and listeners piling up.
import { fixture } from './compiled-lib.helper';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { startDemoServer } from '../helpers/processes';
import {
  adminPost,
  childPids,
  closePools,
  demoHttp,
  expectSettled,
  openFds,
  openPool,
  waitForState,
} from './mcp-test.helper';
import { serverConfig } from '../helpers/server-config';

// Enough cycles that a leak of one resource per reconnect clears every tolerance below (at most
// two extra handles) many times over; each stdio cycle spawns a child, so more only costs time.
const CYCLES = 20;
const ECHO_SERVER = fixture('echo-server');

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
useProcesses({ perTest: true });

function processListeners(): number {
  return process.eventNames().reduce((sum, name) => sum + process.listenerCount(name), 0);
}

/** Active handles and requests (sockets, child processes, timers), as Node reports them. */
function activeResources(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap').length;
}

describe(`${CYCLES} reconnect cycles`, () => {
  it('leak nothing over stdio (the child is killed each time)', async () => {
    const fds = openFds();
    const listeners = processListeners();
    const { pool, recorder } = openPool([
      serverConfig({ name: 'cycled', command: process.execPath, args: [ECHO_SERVER] }),
    ]);
    const session = await pool.session('cycled');
    const resources = activeResources();
    const killed = new Set<number>();
    for (let cycle = 1; cycle <= CYCLES; cycle += 1) {
      // The previous child may linger a moment after its successor is ready: pick the new one.
      const pid = await waitUntil(() => childPids().find((p) => !killed.has(p)), 'the new child');
      killed.add(pid);
      process.kill(pid, 'SIGKILL');
      await waitUntil(
        () => (recorder.transitions('cycled', 'ready').length === cycle + 1 ? true : undefined),
        `reconnect ${cycle}`,
      );
    }
    await session.callTool('echo', { text: 'still here' }, { idempotent: true });
    await waitUntil(() => (childPids().length === 1 ? true : undefined), 'one child');
    expect(activeResources()).toBeLessThanOrEqual(resources + 2);
    await closePools();
    await expectSettled(fds);
    expect(processListeners()).toBe(listeners);
  });

  it('leak nothing over Streamable HTTP (the server forgets the session each time)', async () => {
    const demo = await startDemoServer();
    const fds = openFds();
    const listeners = processListeners();
    const { pool, recorder } = openPool([demoHttp('cycled', demo.url)]);
    const session = await pool.session('cycled');
    const resources = activeResources();
    for (let cycle = 1; cycle <= CYCLES; cycle += 1) {
      await adminPost(demo.url, '/admin/forget-sessions');
      await session.request('tools/list', {}, { idempotent: true });
    }
    expect(recorder.reconnects.filter((r) => r.reason === 'session_expired')).toHaveLength(CYCLES);
    await waitForState(pool, 'cycled', 'ready');
    await waitUntil(
      () => (activeResources() <= resources + 2 ? true : undefined),
      `active resources back to ${resources}`,
    );
    await closePools();
    await demo.kill();
    await expectSettled(fds, 4);
    expect(processListeners()).toBe(listeners);
  });
});
