// Guards against a task outliving its toolset's deadlineSeconds: the deadline must be stamped at
// submit from the mcpServers file, and past it each contract's upstream work must be cancelled and
// the task end failed/deadline_exceeded (never `cancelled`, never `tracking_timeout`), a task never
// submitted must end the same way without reaching the upstream, and the consumer must read a
// fixed sentence. mcp-tasks runs on a server speaking both eras, on it pinned to 2025-11-25, and on
// a strict 2026-07-28 server (it refuses initialize).
import request from 'supertest';
import { apiKeyFor, bearer } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { DemoServerProcess, PollerProcess, metricValue } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const DEADLINE_SECONDS = 3600;

const fleet = useFleet();
let demo: DemoServerProcess;
let strict: DemoServerProcess;
let poller: PollerProcess;
let apiUrl: string;

beforeAll(async () => {
  demo = await fleet.demo();
  strict = await fleet.demo(['--strict-2026']);
  poller = await fleet.poller(
    {
      demo: {
        url: `${demo.url}/mcp`,
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        maxConcurrentCalls: 8,
        taskToolsets: [
          {
            name: 'dl-ordinary',
            contract: 'ordinary',
            submitTool: 'demo_submit',
            statusTool: 'demo_status',
            cancelTool: 'demo_cancel',
            deadlineSeconds: DEADLINE_SECONDS,
          },
          {
            name: 'dl-native',
            contract: 'mcp-tasks',
            tool: 'demo_task_required',
            deadlineSeconds: DEADLINE_SECONDS,
          },
          {
            name: 'dl-sync',
            contract: 'sync-call',
            tool: 'demo_slow',
            callTimeoutMs: 600_000,
            deadlineSeconds: DEADLINE_SECONDS,
          },
        ],
      },
      // The same demo server, pinned to the 2025-11-25 task design (tasks in core, a session).
      demo25: {
        url: `${demo.url}/mcp`,
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        maxConcurrentCalls: 8,
        protocolVersion: '2025-11-25',
        taskToolsets: [
          {
            name: 'dl-native-2025',
            contract: 'mcp-tasks',
            tool: 'demo_task_required',
            deadlineSeconds: DEADLINE_SECONDS,
          },
          // A real, short deadline: a held call that learns of it mid-call, as in production.
          {
            name: 'dl-sync-short',
            contract: 'sync-call',
            tool: 'demo_slow',
            callTimeoutMs: 600_000,
            deadlineSeconds: 3,
          },
        ],
      },
      strict: {
        url: `${strict.url}/mcp`,
        connectTimeoutMs: 1000,
        callTimeoutMs: 1900,
        taskToolsets: [
          {
            name: 'dl-native-strict',
            contract: 'mcp-tasks',
            tool: 'demo_task_required',
            deadlineSeconds: DEADLINE_SECONDS,
          },
        ],
      },
    },
    // mcp-tasks submits chain two connects and two calls (docs/leases.md, "Attempt deadlines").
    { env: { LEASE_MS: '10000' } },
  );
  await waitUntil(async () => {
    const rows = await fleet.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM toolsets WHERE available AND deadline_seconds IS NOT NULL`,
    );
    return rows[0].n === 6 ? true : undefined;
  }, 'the six toolsets published with their deadline');
  apiUrl = (await fleet.api()).url;
}, 120_000);

interface DeadlineRow {
  status: string;
  remote_task_id: string | null;
  deadline_seconds: number | null;
}

async function row(id: string): Promise<DeadlineRow> {
  const [found] = await fleet.db.query<DeadlineRow>(
    `SELECT status, remote_task_id,
            round(extract(epoch FROM deadline_at - created_at))::int AS deadline_seconds
       FROM tasks WHERE id = $1`,
    [id],
  );
  return found;
}

it.each([
  ['dl-ordinary', 'ordinary'],
  ['dl-native', 'mcp-tasks, 2026-07-28'],
  ['dl-native-2025', 'mcp-tasks, 2025-11-25'],
  ['dl-native-strict', 'mcp-tasks, a strict 2026-07-28 server'],
  ['dl-sync', 'sync-call'],
])(
  '%s (%s): past the deadline the upstream work is cancelled and the task fails deadline_exceeded',
  async (toolset) => {
    const tag = `deadline-${toolset}`;
    const upstream = toolset === 'dl-native-strict' ? strict : demo;
    const auth = bearer(await apiKeyFor({ db: fleet.database }, `user-${toolset}`));
    const created = await request(apiUrl)
      .post('/v1/threads/deadlines/tasks')
      .set('Authorization', auth)
      .send({ toolset, arguments: { duration_ms: 120_000, tag } })
      .expect(201);
    const id = created.body.task_id as string;
    // Stamped at submit from the toolset's deadlineSeconds, as the poller published it.
    expect((await row(id)).deadline_seconds).toBe(DEADLINE_SECONDS);
    // Running upstream (a handle stored, or the held call under way) before the deadline passes.
    await waitUntil(async () => {
      const stats = await upstream.stats(tag);
      const current = await row(id);
      return current.status === 'working' && stats.by_tag[tag]?.submits === 1 ? true : undefined;
    }, `${toolset} running upstream`);
    // An hour passes: the submit moves an hour into the past, its deadline with it (the task's,
    // and its lease row's copy that the sweep reads).
    await fleet.db.query(
      `UPDATE tasks SET created_at = created_at - interval '1 hour',
                        deadline_at = deadline_at - interval '1 hour'
        WHERE id = $1`,
      [id],
    );
    await fleet.db.query(
      `UPDATE task_leases SET deadline_at = deadline_at - interval '1 hour' WHERE task_id = $1`,
      [id],
    );

    const ended = await waitUntil(
      async () => {
        const state = (await taskStates(fleet.db, [id])).get(id)!;
        return state.completed_at ? state : undefined;
      },
      `${toolset} to end`,
      30_000,
    );
    expect(ended).toMatchObject({ status: 'failed', error_code: 'deadline_exceeded' });
    expect(ended.error_message).toMatch(/no end within 3600 s of submit/);
    // The upstream's own record: one submit, one cancel (the 2026 demo store keeps no per-tag
    // state, so there the cancel count is the proof). Read once it shows a cancel: a held call's
    // cancel is its request aborted, which the server may act on after the task's end is written.
    const stats = await waitUntil(async () => {
      const read = await upstream.stats(tag);
      return (read.by_tag[tag]?.cancels ?? 0) > 0 ? read : undefined;
    }, `${toolset}'s cancel reaching the upstream`);
    expect(stats.by_tag[tag]).toMatchObject({ submits: 1, cancels: 1 });
    if (stats.by_tag[tag].state !== 'unknown') expect(stats.by_tag[tag].cancelled).toBe(true);

    const shown = await request(apiUrl)
      .get(`/v1/threads/deadlines/tasks/${id}`)
      .set('Authorization', auth)
      .expect(200);
    expect(shown.body.status).toBe('failed');
    expect(shown.body.error).toEqual({
      code: 'deadline_exceeded',
      message:
        "The task did not end within its toolset's deadline (3600 s after submit), so the gateway cancelled it.",
    });
  },
  90_000,
);

it('a task never submitted ends failed deadline_exceeded without reaching the upstream', async () => {
  // A toolset no poller has: it stays queued, its submit never starts.
  const [id] = await insertFleetTasks(fleet.db, [
    { toolset: 'dl-nowhere', server: 'nowhere', input: { tag: 'deadline-never' } },
  ]);
  await fleet.db.query(`UPDATE tasks SET deadline_at = now() + interval '1 second' WHERE id = $1`, [
    id,
  ]);
  await fleet.db.query(
    `UPDATE task_leases SET deadline_at = now() + interval '1 second' WHERE task_id = $1`,
    [id],
  );
  const ended = await waitUntil(
    async () => {
      const state = (await taskStates(fleet.db, [id])).get(id)!;
      return state.completed_at ? state : undefined;
    },
    'the queued task to end',
    30_000,
  );
  expect(ended).toMatchObject({
    status: 'failed',
    error_code: 'deadline_exceeded',
    remote_task_id: null,
    submit_attempts: 0,
  });
  expect((await demo.stats('deadline-never')).by_tag['deadline-never']).toBeUndefined();
});

it('a consumer cancel stays `cancelled`: only the deadline turns a cancel into a failure', async () => {
  const auth = bearer(await apiKeyFor({ db: fleet.database }, 'user-cancel'));
  const created = await request(apiUrl)
    .post('/v1/threads/deadlines/tasks')
    .set('Authorization', auth)
    .send({ toolset: 'dl-ordinary', arguments: { duration_ms: 120_000, tag: 'deadline-user' } })
    .expect(201);
  const id = created.body.task_id as string;
  await waitUntil(
    async () => ((await row(id)).remote_task_id ? true : undefined),
    'the task submitted',
  );
  await request(apiUrl)
    .post(`/v1/threads/deadlines/tasks/${id}/cancel`)
    .set('Authorization', auth)
    .expect(202);
  const ended = await waitUntil(
    async () => {
      const state = (await taskStates(fleet.db, [id])).get(id)!;
      return state.completed_at ? state : undefined;
    },
    'the cancelled task to end',
    30_000,
  );
  expect(ended).toMatchObject({ status: 'cancelled', error_code: null });
});

it('counts each deadline end as a transition to failed, never to cancelled', async () => {
  const auth = bearer(await apiKeyFor({ db: fleet.database }, 'user-short'));
  const created = await request(apiUrl)
    .post('/v1/threads/deadlines/tasks')
    .set('Authorization', auth)
    .send({ toolset: 'dl-sync-short', arguments: { duration_ms: 120_000, tag: 'deadline-short' } })
    .expect(201);
  const id = created.body.task_id as string;
  const ended = await waitUntil(
    async () => {
      const state = (await taskStates(fleet.db, [id])).get(id)!;
      return state.completed_at ? state : undefined;
    },
    'the held call to reach its 3 s deadline',
    30_000,
  );
  expect(ended).toMatchObject({ status: 'failed', error_code: 'deadline_exceeded' });
  const text = await poller.metrics();
  const to = (toolset: string, status: string) =>
    metricValue(text, 'mcp_tasks_transitions_total', { toolset, to: status });
  // Not dl-sync: the test moved its deadline after the claim, which production never does.
  for (const toolset of ['dl-native', 'dl-native-2025', 'dl-sync-short', 'dl-nowhere']) {
    expect([toolset, to(toolset, 'failed'), to(toolset, 'cancelled')]).toEqual([toolset, 1, 0]);
  }
  // dl-ordinary: one deadline end and the consumer's cancel.
  expect([to('dl-ordinary', 'failed'), to('dl-ordinary', 'cancelled')]).toEqual([1, 1]);
});
