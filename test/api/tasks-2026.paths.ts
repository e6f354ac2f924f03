// The SEP-2663 (MCP 2026-07-28) paths end to end through the API, with real pollers, real
// Postgres and the demo server over HTTP, run by one test file per upstream variant (a server
// speaking both eras, a strict 2026-07-28 server, pinned or not): what the server decides (a result
// at once, a task, questions first), tool and protocol errors, cancel, lost and expired tasks, and
// answers given through the API (partial, twice, by another user, and across a poller killed
// before sending).
import request from 'supertest';
import { DEFAULT_MAX_MESSAGE_BYTES } from '@app/config';
import { freePort } from '@app/dev-db';
import { StatelessHttpClient } from '@app/upstream';
import { useFleet } from '../helpers/fleet';
import { writeServersFile, type DemoServerProcess, type PollerProcess } from '../helpers/processes';
import { waitForStatus, waitUntil } from '../helpers/wait';
import { ApiProcess, apiKeyFor, bearer } from '../helpers/api';

interface TaskBody {
  task_id: string;
  status: string;
  result: { content?: unknown[]; structuredContent?: Record<string, unknown>; isError?: boolean };
  error: { code: string; message: string } | null;
  input_required: { requests: Record<string, { method: string; params: Record<string, unknown> }> };
}

const TOOLSETS: Record<string, string> = {
  task: 'demo_task',
  ask1: 'demo_ask_one',
  ask2: 'demo_ask_two',
  mrtr: 'demo_mrtr',
  long: 'demo_long',
  'tool-error': 'demo_tool_error',
  'protocol-error': 'demo_protocol_error',
};
const YES = { action: 'accept', content: { confirm: true } };

/** The upstream the paths run against. */
export interface Tasks2026Variant {
  /** Extra demo-server flags (`--strict-2026`: it refuses initialize). */
  args: string[];
  /** The servers' `protocolVersion` in the mcpServers file, when pinned. */
  pin?: '2026-07-28';
  /** Also run the slow poller-kill path (15 s of lease expiry): once per upstream kind is enough. */
  slowPaths: boolean;
}

// Unpinned mcp-tasks over HTTP: a submit may chain two connects, discovery and the call, a cancel
// three calls (docs/leases.md, "Attempt deadlines"); 8 s holds them with these timeouts.
const POLLER_ENV = { LEASE_MS: '8000' };

/** Registers the setup and every path against `variant` in the calling test file. */
export function tasks2026Paths(variant: Tasks2026Variant): void {
  const fleet = useFleet();
  let api: ApiProcess;
  let demo: DemoServerProcess;
  let restartable: DemoServerProcess;
  let restartablePort: number;
  let poller: PollerProcess;
  let serversFile: string;
  let alice: string;
  let bob: string;
  let tagCount = 0;

  function entry(url: string, names: string[]): Record<string, unknown> {
    return {
      url: `${url}/mcp`,
      connectTimeoutMs: 1000,
      callTimeoutMs: 1900,
      ...(variant.pin ? { protocolVersion: variant.pin } : {}),
      taskToolsets: names.map((name) => ({
        name: url === demo.url ? `m-${name}` : `r-${name}`,
        contract: 'mcp-tasks',
        tool: TOOLSETS[name],
      })),
    };
  }

  beforeAll(async () => {
    api = await fleet.api();
    demo = await fleet.demo(variant.args);
    restartablePort = await freePort();
    restartable = await fleet.demo(['--port', String(restartablePort), ...variant.args]);
    serversFile = writeServersFile({
      modern: entry(demo.url, Object.keys(TOOLSETS)),
      restartable: entry(restartable.url, ['long']),
    });
    alice = await apiKeyFor({ db: fleet.database }, 'alice');
    bob = await apiKeyFor({ db: fleet.database }, 'bob');
    poller = await fleet.poller(serversFile, { env: POLLER_ENV });
    // Every toolset available within 10 s of the poller's start, whatever the server speaks.
    await waitUntil(
      async () => {
        const res = await request(api.url).get('/v1/toolsets').set('Authorization', bearer(alice));
        const items = (res.body as { items: Array<{ name: string; available: boolean }> }).items;
        return items.filter((t) => t.available).length === 8 ? true : undefined;
      },
      'the 2026 toolsets to be available',
      10_000,
      200,
    );
  });

  function tag(): string {
    return `t2026-${process.pid}-${++tagCount}`;
  }

  async function submit(toolset: string, args: Record<string, unknown> = {}): Promise<string> {
    const res = await request(api.url)
      .post('/v1/threads/th-2026/tasks')
      .set('Authorization', bearer(alice))
      .send({ toolset, arguments: args });
    expect(res.status).toBe(201);
    return (res.body as TaskBody).task_id;
  }

  async function read(id: string, key = alice): Promise<{ status: number; body: TaskBody }> {
    const res = await request(api.url)
      .get(`/v1/threads/th-2026/tasks/${id}`)
      .set('Authorization', bearer(key));
    return { status: res.status, body: res.body as TaskBody };
  }

  /**
   * Reads the task as its owner sees it until its status is one of `statuses`; each wait spans a
   * few poller round trips through the demo server.
   */
  const untilStatus = (id: string, statuses: string | string[], timeoutMs = 20_000) =>
    waitForStatus(async () => (await read(id)).body, statuses, { timeoutMs, intervalMs: 100 });

  const ENDED = ['completed', 'failed', 'cancelled'];

  function answer(id: string, responses: Record<string, unknown>, key = alice) {
    return request(api.url)
      .post(`/v1/threads/th-2026/tasks/${id}/input`)
      .set('Authorization', bearer(key))
      .send({ responses });
  }

  /** The 2026 side's demo_stats for a tag: tasks made, cancels, and answers accepted by key. */
  async function stats(
    tagName: string,
  ): Promise<{ submits: number; cancels: number; answers: Record<string, number> }> {
    const client = new StatelessHttpClient(
      {
        name: 'stats',
        transport: 'http',
        url: `${demo.url}/mcp`,
        args: [],
        env: {},
        headers: {},
        connectTimeoutMs: 2000,
        callTimeoutMs: 2000,
        maxConcurrentCalls: 1,
        keepaliveIntervalMs: 30000,
        maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
        parkedProbeMs: 300000,
        connectAttempts: 1,
        sharedState: false,
        toolsets: [],
      },
      { info() {}, warn() {}, error() {}, debug() {} },
    );
    const result = await client.request(
      'tools/call',
      { name: 'demo_stats', arguments: { tag: tagName } },
      { idempotent: true, name: 'demo_stats' },
    );
    const byTag = (result.structuredContent as { by_tag: Record<string, object> }).by_tag;
    return { submits: 0, cancels: 0, answers: {}, ...(byTag[tagName] ?? {}) };
  }

  it('resultType complete: the task completes with the result, no upstream task', async () => {
    const t = tag();
    const id = await submit('m-task', { immediate: true, tag: t, result: { n: 7 } });
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect(task.result.structuredContent).toEqual({ n: 7 });
    expect((await stats(t)).submits).toBe(0);
  });

  it('a task: completes with its result, polled at its pollIntervalMs', async () => {
    const t = tag();
    const id = await submit('m-task', { duration_ms: 600, poll_interval_ms: 200, tag: t });
    const task = await untilStatus(id, ENDED);
    expect(task).toMatchObject({ status: 'completed', error: null });
    expect(task.result.structuredContent).toMatchObject({ echo: expect.any(Object) as object });
    expect((await stats(t)).submits).toBe(1);
  });

  it('a tool error ends failed / upstream_failed with content and isError kept', async () => {
    const id = await submit('m-tool-error', { fail_message: 'disk full' });
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('upstream_failed');
    expect(task.error?.message).toContain('disk full');
    expect(task.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('disk full') as string }],
    });
  });

  it('a protocol error (JSON-RPC error inside the task) ends failed with no result', async () => {
    const id = await submit('m-protocol-error', { fail_message: 'engine exploded' });
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('upstream_failed');
    expect(task.error?.message).toMatch(/engine exploded/);
    expect(task.result).toBeNull();
  });

  it('cancel: tasks/cancel, then the status decides (cancelled upstream too)', async () => {
    const t = tag();
    const id = await submit('m-long', { tag: t });
    await untilStatus(id, 'working');
    const res = await request(api.url)
      .post(`/v1/threads/th-2026/tasks/${id}/cancel`)
      .set('Authorization', bearer(alice));
    expect(res.status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('cancelled');
    expect((await stats(t)).cancels).toBe(1);
  });

  it('TTL: a task the server expires ends upstream_task_lost', async () => {
    const id = await submit('m-task', { duration_ms: 60_000, ttl_ms: 1500, poll_interval_ms: 300 });
    // The demo server pushes, so the task waits for the safety poll (20 × 300 ms, at least 5.4 s
    // with jitter), but no later than its TTL (docs/connections.md, "Push").
    const task = await untilStatus(id, ENDED, 4_500);
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('upstream_task_lost');
  });

  it('one question answered through the API; a second POST is harmless; another user gets 404', async () => {
    const t = tag();
    const id = await submit('m-ask1', { tag: t });
    const waiting = await untilStatus(id, 'input_required');
    expect(Object.keys(waiting.input_required.requests)).toEqual(['confirm']);
    expect(waiting.input_required.requests.confirm.method).toBe('elicitation/create');
    expect((await answer(id, { confirm: YES }, bob)).status).toBe(404);
    expect((await answer(id, { confirm: YES })).status).toBe(202);
    expect((await answer(id, { confirm: YES })).status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect(task.result.structuredContent).toMatchObject({ answers: { confirm: YES } });
    expect((await stats(t)).answers).toEqual({ confirm: 1 });
    expect((await answer(id, { confirm: YES })).status).toBe(202);
    expect((await answer(id, { confirm: { action: 'decline' } })).status).toBe(409);
  });

  it('two questions: the first answer keeps it input_required for the other', async () => {
    const t = tag();
    const id = await submit('m-ask2', { tag: t });
    const waiting = await untilStatus(id, 'input_required');
    expect(Object.keys(waiting.input_required.requests).sort()).toEqual(['confirm', 'name']);
    const partial = await answer(id, { name: { action: 'accept', content: { name: 'Ada' } } });
    expect(partial.status).toBe(202);
    expect(Object.keys((partial.body as TaskBody).input_required.requests)).toEqual(['confirm']);
    // Delivered upstream, and the task still waits for the other key.
    await waitUntil(
      async () => ((await stats(t)).answers.name === 1 ? true : undefined),
      'name sent',
    );
    const still = await read(id);
    expect(still.body.status).toBe('input_required');
    expect(Object.keys(still.body.input_required.requests)).toEqual(['confirm']);
    expect((await answer(id, { confirm: YES })).status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect((await stats(t)).answers).toEqual({ name: 1, confirm: 1 });
  });

  it('a multi-round-trip call: questions before any task, the call retried with the answers', async () => {
    const t = tag();
    const id = await submit('m-mrtr', { tag: t, duration_ms: 300 });
    const waiting = await untilStatus(id, 'input_required');
    expect(Object.keys(waiting.input_required.requests)).toEqual(['approval']);
    expect((await stats(t)).submits).toBe(0);
    const res = await answer(id, { approval: { action: 'accept', content: { approve: true } } });
    expect(res.status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect(task.result.structuredContent).toMatchObject({ approved: true });
    expect((await stats(t)).submits).toBe(1);
    // Waiting started straight from queued: that is a task.input_required event too.
    const events = await fleet.db.query<{ type: string }>(
      `SELECT type FROM task_events WHERE task_id = $1 ORDER BY sequence`,
      [id],
    );
    expect(events.map((event) => event.type)).toEqual([
      'task.input_required',
      'task.working',
      'task.completed',
    ]);
  });

  it('a multi-round-trip call that answers complete after the round ends with that result', async () => {
    const t = tag();
    const id = await submit('m-mrtr', { tag: t, then: 'complete' });
    await untilStatus(id, 'input_required');
    const res = await answer(id, { approval: { action: 'accept', content: { approve: true } } });
    expect(res.status).toBe(202);
    const task = await untilStatus(id, ENDED);
    expect(task.status).toBe('completed');
    expect(task.result.structuredContent).toMatchObject({ approved: true });
    expect((await stats(t)).submits).toBe(0);
  });

  it('a task lost by an upstream restart ends upstream_task_lost', async () => {
    const id = await submit('r-long', {});
    await untilStatus(id, 'working');
    await restartable.stop();
    restartable = await fleet.demo(['--port', String(restartablePort), ...variant.args]);
    const task = await untilStatus(id, ENDED, 30_000);
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('upstream_task_lost');
  });

  if (variant.slowPaths) {
    it('a poller killed between storing an answer and sending it: delivered once after takeover', async () => {
      const t = tag();
      const id = await submit('m-ask1', { tag: t });
      await untilStatus(id, 'input_required');
      poller.pause();
      try {
        expect((await answer(id, { confirm: YES })).status).toBe(202);
      } finally {
        await poller.kill();
      }
      expect((await stats(t)).answers).toEqual({});
      poller = await fleet.poller(serversFile, { env: POLLER_ENV });
      const task = await untilStatus(id, ENDED, 30_000);
      expect(task.status).toBe('completed');
      expect((await stats(t)).answers).toEqual({ confirm: 1 });
    });
  }
}
