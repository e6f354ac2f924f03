// Guards against an MCP task depending on the API replica or the poller that handled it: the
// client creates a task on one replica, that replica is killed, and the client finishes the
// task on a second replica while a poller is killed mid-task; and against a second user
// reaching the task through tasks/update or the companion tools; and against the 2025-11-25
// status stream depending on the replica that served it (a Last-Event-ID from one replica
// resumes on another, without loss or repeats).
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { ApiProcess } from '../helpers/api';
import { waitUntil } from '../helpers/wait';
import {
  DEMO_TOOLSETS,
  SseFrame,
  openStatusStream,
  postMcp,
  postMcp2026,
  useFrontDoor,
} from './front-door-harness';
import { sdkClient } from '../helpers/mcp-client';

// A short lease, so a poller killed while it holds the task's claim is replaced in seconds.
const fd = useFrontDoor({
  pollers: 2,
  // demo-sync declared safe to repeat: a call whose poller died is run again, not failed
  // outcome_uncertain.
  toolsets: DEMO_TOOLSETS.map((t) => (t.name === 'demo-sync' ? { ...t, retryOnCrash: true } : t)),
  // A native cancel chains a connect and three calls: 2000 + 3 × 2500 ms fit the 10 s lease.
  server: { connectTimeoutMs: 2000, callTimeoutMs: 2500 },
  pollerEnv: { LEASE_MS: '10000' },
});
let second: ApiProcess;

beforeAll(async () => {
  second = await fd.addApi();
});

it('the status stream resumes on another replica from the Last-Event-ID the first one sent', async () => {
  const url = (base: string) => `${base}/mcp?thread=resume`;
  const first = await openStatusStream(url(fd.api.url), fd.keys.alice);
  expect(first.status).toBe(200);
  const created = await postMcp(
    fd.api.url,
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'demo-sync',
        arguments: { duration_ms: 1000 },
        task: {},
        _meta: { 'mcp-task-gateway/thread': 'resume' },
      },
    },
    { authorization: `Bearer ${fd.keys.alice}` },
  );
  const taskId = created.body.result.task.taskId as string;
  const statusOf = (frame: SseFrame) =>
    frame.data?.params?.taskId === taskId ? (frame.data.params.status as string) : undefined;
  const working = await waitUntil(
    () => first.frames.find((f) => statusOf(f) === 'working'),
    'the working notification on the first replica',
    30_000,
  );
  first.close();
  // The task ends while no stream is open: only resuming from the ID brings its notification.
  await waitUntil(
    async () => {
      const got = await postMcp(
        second.url,
        { jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId } },
        { authorization: `Bearer ${fd.keys.alice}` },
      );
      return got.body.result?.status === 'completed' ? true : undefined;
    },
    'the task to complete',
    30_000,
  );
  const resumed = await openStatusStream(url(second.url), fd.keys.alice, {
    'last-event-id': working.id!,
  });
  expect(resumed.status).toBe(200);
  await waitUntil(
    () => resumed.frames.find((f) => statusOf(f) === 'completed'),
    'the completed notification on the second replica',
    30_000,
  );
  resumed.close();
  expect(resumed.frames.map(statusOf).filter(Boolean)).toEqual(['completed']);
});

it('a task created on a replica that dies, with a poller killed mid-task, completes for the client on another replica', async () => {
  const first = await sdkClient(fd.api.url, fd.keys.alice);
  const created = await first.request(
    {
      method: 'tools/call',
      params: {
        name: 'report',
        // 12 s: still working after the replica's death, a new client and the poller's kill.
        arguments: { duration_ms: 12_000, result: { survived: true } },
        task: {},
      },
    },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  await fd.api.process.kill('SIGKILL');
  await first.close().catch(() => undefined);

  const client = await sdkClient(second.url, fd.keys.alice);
  await waitUntil(
    async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return task.status === 'working' ? task : undefined;
    },
    'the task working for the client',
    30_000,
  );
  // MCP's `working` also covers a task still queued or mid-submit; a kill then may honestly end
  // it outcome_uncertain. The kill below is meant for a submitted task: its handle is stored.
  await waitUntil(
    async () => {
      const rows = await fd.api.db.db.query(
        `SELECT 1 FROM tasks WHERE id = $1 AND remote_task_id IS NOT NULL`,
        [taskId],
      );
      return rows.length > 0 ? true : undefined;
    },
    'the task submitted upstream (its handle stored)',
    30_000,
  );
  // Kill the poller holding the task's claim if one does at this moment, else the first one.
  const held = await fd.api.db.db.query<{ pid: number }>(
    `SELECT w.pid FROM task_rows t JOIN workers w ON w.id = t.lease_owner WHERE t.id = $1`,
    [taskId],
  );
  const victim = fd.pollers.find((p) => p.child.pid === held[0]?.pid) ?? fd.pollers[0];
  await victim.kill('SIGKILL');
  const ended = await waitUntil(
    async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return task.status === 'completed' || task.status === 'failed' ? task : undefined;
    },
    'the task to end after the poller was killed',
    60_000,
  );
  expect(ended.status).toBe('completed');
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  expect(JSON.stringify(result.content)).toContain('survived');
  await client.close();
});

it("tasks/update and the companion tools answer another user's task as one that never existed", async () => {
  const bobKey = fd.keys.bob;
  const aliceKey = fd.keys.alice;
  const call = (key: string, method: string, params: Record<string, unknown>) =>
    postMcp2026(second.url, key, method, params);
  const created = await call(aliceKey, 'tools/call', {
    name: 'demo-sync',
    arguments: { duration_ms: 100 },
  });
  const mine = created.body.result.taskId as string;
  const never = 'task_cccccccccccccccccccccccccc';
  const update = async (taskId: string) =>
    (
      await call(bobKey, 'tasks/update', {
        taskId,
        inputResponses: { input: { action: 'accept' } },
      })
    ).body.error;
  expect(await update(mine)).toEqual(await update(never));
  expect((await update(never)).code).toBe(-32602);
  const bob = await sdkClient(second.url, bobKey);
  for (const tool of ['gateway_task_cancel', 'gateway_task_answer']) {
    const args = (taskId: string) =>
      tool === 'gateway_task_answer' ? { task_id: taskId, responses: {} } : { task_id: taskId };
    const a = JSON.stringify(await bob.callTool({ name: tool, arguments: args(mine) })).replace(
      mine,
      '<id>',
    );
    const b = JSON.stringify(await bob.callTool({ name: tool, arguments: args(never) })).replace(
      never,
      '<id>',
    );
    expect(a).toEqual(b);
  }
  await bob.close();
  // Alice's task was not cancelled by Bob's attempt.
  const row = await fd.api.db.db.query<{ cancel_requested_at: Date | null }>(
    `SELECT cancel_requested_at FROM tasks WHERE id = $1`,
    [mine],
  );
  expect(row[0].cancel_requested_at).toBeNull();
});

it('a poller killed while it holds the task mid-call: another poller runs it to the end', async () => {
  const spare = fd.addPoller();
  const client = await sdkClient(second.url, fd.keys.alice);
  const created = await client.request(
    {
      method: 'tools/call',
      params: {
        name: 'demo-sync',
        arguments: { duration_ms: 6000, result: { rerun: true } },
        task: {},
      },
    },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  // A sync call holds its task's lease for the whole upstream call: wait for the holder.
  const holder = await waitUntil(
    async () => {
      const rows = await fd.api.db.db.query<{ pid: number; status: string }>(
        `SELECT w.pid, t.status FROM task_rows t JOIN workers w ON w.id = t.lease_owner
          WHERE t.id = $1`,
        [taskId],
      );
      const live = fd.pollers.find(
        (p) => p.child.exitCode === null && p.child.pid === rows[0]?.pid,
      );
      return rows[0]?.status === 'working' ? live : undefined;
    },
    'a poller to hold the call',
    30_000,
  );
  await holder.kill('SIGKILL');
  const ended = await waitUntil(
    async () => {
      const task = await client.experimental.tasks.getTask(taskId);
      return task.status === 'completed' || task.status === 'failed' ? task : undefined;
    },
    'the task to end on another poller',
    90_000,
  );
  expect(ended.status).toBe('completed');
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  expect(JSON.stringify(result.content)).toContain('rerun');
  expect(spare.child.exitCode).toBeNull();
  await client.close();
}, 150_000);
