// Guards against stdio servers that crash mid-call, dead children that swallow calls, and orphaned process trees.
import { createInterface } from 'node:readline';
import { UpstreamConnectionError, UpstreamError } from '@app/upstream';
import { compileMcpLib, fixture } from './compiled-lib.helper';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';
import { DEMO_SERVER_MAIN } from '../helpers/processes';
import {
  childPids,
  closePools,
  demoStdio,
  expectSettled,
  openFds,
  openPool,
  processAlive,
  waitForState,
} from './mcp-test.helper';
import { serverConfig } from '../helpers/server-config';

const WRAPPER = fixture('stubborn-wrapper');

afterEach(closePools);
// What a test starts stops after it (docs/testing.md, "Processes go through a fixture").
const processes = useProcesses({ perTest: true });

describe('stdio process lifecycle', () => {
  it('fails a call at once when the server crashes mid-call, then respawns', async () => {
    // No timer under 30 s: the bound below then tells a crash noticed from a timeout waited out.
    const { pool, recorder } = openPool([demoStdio('crashy', [], { connectTimeoutMs: 60_000 })]);
    const session = await pool.session('crashy');
    const [firstPid] = childPids();
    const started = Date.now();
    const error = await session
      .callTool(
        'demo_slow',
        { duration_ms: 600, fault: 'crash_call' },
        {
          idempotent: false,
          timeoutMs: 30_000,
        },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect((error as UpstreamConnectionError).maybeSent).toBe(true);
    // Far inside its 30 s timeout (and the 60 s connect timeout), with room for a slow host.
    expect(Date.now() - started).toBeLessThan(15_000);

    const again = await pool.session('crashy');
    const echo = await again.callTool('demo_echo', { text: 'back' }, { idempotent: true });
    expect(echo.structuredContent).toEqual({ text: 'back' });
    expect(childPids()).not.toContain(firstPid);
    expect(recorder.reconnects).toContainEqual({ server: 'crashy', reason: 'connection_lost' });
    expect(recorder.transitions('crashy', 'degraded')).toHaveLength(1);
  });

  it('fails a call on a dead child at once instead of waiting for its timeout', async () => {
    // No timer under 30 s, as above: a reconnect waited out would take 60 s.
    const { pool, recorder } = openPool([demoStdio('victim', [], { connectTimeoutMs: 60_000 })]);
    const session = await pool.session('victim');
    const [pid] = childPids();
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => recorder.transitions('victim', 'degraded')[0], 'the exit to be noticed');
    const started = Date.now();
    const error = await session
      .callTool('demo_echo', { text: 'x' }, { idempotent: true, timeoutMs: 30_000 })
      .catch((caught: unknown) => caught);
    // Far inside its 30 s timeout: the dead child was noticed, not waited out.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).maybeSent).toBe(false);
    await waitForState(pool, 'victim', 'ready');
  });

  it('ends the whole process group of an npx-style wrapper on close', async () => {
    const fds = openFds();
    const { pool, recorder } = openPool([
      serverConfig({
        name: 'wrapped',
        command: process.execPath,
        args: [WRAPPER, DEMO_SERVER_MAIN],
      }),
    ]);
    const session = await pool.session('wrapped');
    await session.callTool('demo_echo', { text: 'x' }, { idempotent: true });
    const line = await waitUntil(
      () => recorder.logs.find((log) => String(log.obj.stderr).startsWith('grandchildren ')),
      'the wrapper to report its grandchildren',
    );
    const grandchildren = String(line.obj.stderr).split(' ').slice(1).map(Number);
    expect(grandchildren.every(processAlive)).toBe(true);
    await closePools();
    expect(grandchildren.filter(processAlive)).toEqual([]);
    await expectSettled(fds);
  });

  it('reaps the process group a SIGKILLed worker left behind, whatever the new worker ID', async () => {
    const owner = processes.spawn(process.execPath, [fixture('crash-owner')], {
      env: {
        ...process.env,
        MCP_LIB: compileMcpLib(),
        // What the worker script used to build itself, at its old limits: one slot, one attempt.
        SERVER_CONFIG: JSON.stringify(
          serverConfig({
            name: 'wrapped',
            command: process.execPath,
            args: [WRAPPER, DEMO_SERVER_MAIN],
            connectTimeoutMs: 10_000,
            callTimeoutMs: 10_000,
            maxConcurrentCalls: 1,
            connectAttempts: 1,
          }),
        ),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve) =>
      createInterface({ input: owner.stdout! }).once('line', resolve),
    );
    expect(line).toMatch(/^grandchildren \d+ \d+$/);
    const sleeper = Number(line.split(' ')[2]);
    const exited = new Promise((resolve) => owner.once('exit', resolve));
    owner.kill('SIGKILL');
    await exited;
    // The sleeper ignores stdin, so nothing but the reaper can end it.
    expect(processAlive(sleeper)).toBe(true);
    // A restarted poller gets a new random ID: only the host's default directory is shared.
    const { pool } = openPool([], undefined, { processGroupDir: undefined });
    await waitUntil(() => (processAlive(sleeper) ? undefined : true), 'the orphan to be reaped');
    await pool.close();
  });
});
