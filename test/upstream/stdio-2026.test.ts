// Guards against a stdio server that speaks 2026-07-28 only (the official SDK v2's stdio entry
// with `legacy: 'reject'`, test/upstream/official-2026-server.mjs) losing a request silently when
// its child dies, or leaving children behind: the session side's refused one, the 2026-07-28
// side's, or one started only to ask (docs/connections.md, "MCP 2026-07-28 over stdio"); and a
// push subscription over stdio (the demo server, the only such server that pushes tasks) that
// misroutes its lines or outlives its child.
import { join } from 'node:path';
import { Contract } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import { UpstreamConnectionError } from '@app/upstream';
import { serverConfig } from '../helpers/server-config';
import { waitUntil } from '../helpers/wait';
import {
  childPids,
  closePools,
  demoStdio,
  expectSettled,
  nativeToolset,
  openFds,
  openPool,
  waitForState,
} from './mcp-test.helper';

const SCRIPT = join(__dirname, 'official-2026-server.mjs');

afterEach(closePools);

function held(server: string): ToolsetConfig {
  return {
    name: `${server}-held`,
    server,
    contract: Contract.SyncCall,
    tool: 'slow_echo',
    callTimeoutMs: 10_000,
    retryOnCrash: false,
  };
}

/** The official server over stdio: strict unless `--defaults` is among `args`. */
function official(name: string, args: string[] = [], extra: Partial<ServerConfig> = {}) {
  return serverConfig({
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [SCRIPT, '--stdio', ...args],
    toolsets: [held(name)],
    ...extra,
  });
}

const echo = { idempotent: false, timeoutMs: 10_000 };

it('a call on a child that dies fails as maybe processed; the next call starts another', async () => {
  const fds = openFds();
  const { pool } = openPool([official('pinned', [], { protocolVersion: '2026-07-28' })]);
  await waitForState(pool, 'pinned', 'ready');
  const session = await pool.session('pinned');
  expect(childPids()).toHaveLength(1);
  const [child] = childPids();
  let running = false;
  const call = session
    .callTool(
      'slow_echo',
      { text: 'lost', ms: 60_000 },
      { ...echo, onProgress: () => (running = true) },
    )
    .catch((error: unknown) => error);
  // Its progress shows the child has the request.
  await waitUntil(() => (running ? true : undefined), 'the call to report progress');
  process.kill(child, 'SIGKILL');
  const error = await call;
  expect(error).toBeInstanceOf(UpstreamConnectionError);
  expect((error as UpstreamConnectionError).maybeSent).toBe(true);
  const again = await session.callTool('slow_echo', { text: 'again', ms: 0 }, echo);
  expect(again.content).toEqual([{ type: 'text', text: 'echo: again' }]);
  expect(childPids().filter((pid) => pid !== child)).toHaveLength(1);
  await pool.close();
  await expectSettled(fds);
});

it('unpinned and strict: one child serves once the session is refused, none after close', async () => {
  const fds = openFds();
  const { pool, recorder } = openPool([official('found')]);
  await waitForState(pool, 'found', 'ready');
  const session = await pool.session('found');
  const answer = await session.callTool('slow_echo', { text: 'found', ms: 0 }, echo);
  expect(answer.content).toEqual([{ type: 'text', text: 'echo: found' }]);
  expect(pool.status('found').taskProtocol).toBe('2026-07-28');
  // The refused session's child is gone; the 2026-07-28 side's serves.
  await waitUntil(
    () => (childPids().length === 1 ? true : undefined),
    () => `one child (${childPids().join(', ')})`,
  );
  expect(recorder.logs.some((line) => line.msg === 'upstream era found')).toBe(true);
  await pool.close();
  await expectSettled(fds);
});

it('on its defaults it keeps its session, and no second child is started to ask', async () => {
  const fds = openFds();
  const { pool } = openPool([official('defaults', ['--defaults'])]);
  await waitForState(pool, 'defaults', 'ready');
  const session = await pool.session('defaults');
  expect(session.sessionId).toBeUndefined(); // stdio: the child's one session
  const answer = await session.callTool('slow_echo', { text: 'kept', ms: 0 }, echo);
  expect(answer.content).toEqual([{ type: 'text', text: 'echo: kept' }]);
  expect(pool.status('defaults').taskProtocol).toBe('2025-11-25');
  expect(childPids()).toHaveLength(1);
  await pool.close();
  await expectSettled(fds);
});

it("a listen over stdio: acknowledged, told of each change, ended by the child's exit", async () => {
  const fds = openFds();
  const config = demoStdio('pushing', ['--strict-2026'], {
    protocolVersion: '2026-07-28',
    toolsets: [nativeToolset('pushing')],
  });
  const { pool } = openPool([config]);
  await waitForState(pool, 'pushing', 'ready');
  const created = await pool
    .statelessSession('pushing')
    .request(
      'tools/call',
      { name: 'demo_task', arguments: { duration_ms: 300 } },
      { idempotent: false, timeoutMs: 10_000 },
    );
  const taskId = created.taskId as string;
  const heard = (events: string[]) => ({
    onAcknowledged: (ids: string[]) => events.push(`ack ${ids.join(',')}`),
    onTask: (id: string) => events.push(`task ${id}`),
    onEnd: (reason: string) => events.push(`end ${reason}`),
  });
  const first: string[] = [];
  const listen = pool.listenTasks('pushing', [taskId, 'unknown'], heard(first));
  await waitUntil(() => (first.length >= 2 ? true : undefined), 'the end of the task pushed');
  expect(first).toEqual([`ack ${taskId}`, `task ${taskId}`]);
  // Closed by the gateway: no end is reported for it.
  listen.close();
  const second: string[] = [];
  pool.listenTasks('pushing', [taskId], heard(second));
  await waitUntil(() => (second.length >= 1 ? true : undefined), 'the second acknowledged');
  const [child] = childPids();
  process.kill(child, 'SIGKILL');
  await waitUntil(() => (second.length >= 2 ? true : undefined), 'the second to end');
  expect(second).toEqual([`ack ${taskId}`, 'end the stdio server exited']);
  expect(first).toHaveLength(2);
  await pool.close();
  await expectSettled(fds);
});
