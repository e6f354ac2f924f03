// Guards against a task's life through the API breaking in any contract (complete, cancel,
// fail) with real pollers and a real upstream, and against upstream internals leaking on the way.
import request from 'supertest';
import { UPSTREAM_SERVER, useFrontDoor } from '../front-door/front-door-harness';
import { ApiHarness, bearer } from '../helpers/api';
import { DEMO_ORDINARY_TOOLS } from '../helpers/processes';
import { waitForStatus } from '../helpers/wait';

const TOOLSETS = ['demo-ordinary', 'demo-native', 'demo-sync'] as const;

const frontDoor = useFrontDoor({
  pollers: 2,
  // demo_task_required lives on the demo server's 2025-11-25 side.
  server: { protocolVersion: '2025-11-25' },
  toolsets: [
    { name: 'demo-ordinary', ...DEMO_ORDINARY_TOOLS },
    { name: 'demo-native', contract: 'mcp-tasks', tool: 'demo_task_required' },
    { name: 'demo-sync', contract: 'sync-call', tool: 'demo_slow', callTimeoutMs: 60000 },
  ],
});
let api: ApiHarness;
let auth: string;
const bodies: string[] = [];

beforeAll(() => {
  api = frontDoor.api;
  auth = bearer(frontDoor.keys.alice);
});

/** Every answer is kept for the leak search at the end. */
async function call(
  method: 'get' | 'post',
  path: string,
  body?: object,
  headers: Record<string, string> = {},
) {
  let req = request(api.url)[method](path).set('Authorization', auth);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  const res = await (body ? req.send(body) : req);
  bodies.push(res.text);
  return res;
}

async function readTask(thread: string, id: string) {
  const res = await call('get', `/v1/threads/${thread}/tasks/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}
const ENDED = ['completed', 'failed', 'cancelled'];
/** Ordinary work takes a few polls; a minute leaves room on a loaded machine. */
const WAIT = { timeoutMs: 60_000 };

describe.each(TOOLSETS)('%s through the API', (toolset) => {
  const thread = `life-${toolset}`;

  it('runs submit → completed with its result, answered within Prefer: wait', async () => {
    const submitted = await call(
      'post',
      `/v1/threads/${thread}/tasks`,
      { toolset, arguments: { duration_ms: 1500, result: { answer: 42 } } },
      { Prefer: 'wait=20' },
    );
    expect(submitted.status).toBe(201);
    expect(submitted.headers['preference-applied']).toBe('wait=20');
    // The hold ends when the task does (docs/api.md, "Behaviour worth knowing"), inside 20 s.
    expect(submitted.body.status).toBe('completed');
    const done = await readTask(thread, submitted.body.task_id);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toContain('42');
    expect(done.completed_at).not.toBeNull();
    expect(done.error).toBeNull();
  });

  it('cancels a running task', async () => {
    const submitted = await call('post', `/v1/threads/${thread}/tasks`, {
      toolset,
      arguments: { duration_ms: 60_000 },
    });
    await waitForStatus(() => readTask(thread, submitted.body.task_id), 'working', WAIT);
    const cancel = await call(
      'post',
      `/v1/threads/${thread}/tasks/${submitted.body.task_id}/cancel`,
    );
    expect(cancel.status).toBe(202);
    expect(cancel.body.cancel_requested).toBe(true);
    const done = await waitForStatus(() => readTask(thread, submitted.body.task_id), ENDED, WAIT);
    expect(done.status).toBe('cancelled');
  });

  it('reports an upstream failure with its error code', async () => {
    const submitted = await call('post', `/v1/threads/${thread}/tasks`, {
      toolset,
      arguments: { duration_ms: 300, outcome: 'fail', fail_message: `boom in ${toolset}` },
    });
    expect(submitted.status).toBe(201);
    const done = await waitForStatus(() => readTask(thread, submitted.body.task_id), ENDED, WAIT);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('upstream_failed');
    expect(done.error.message).toContain(`boom in ${toolset}`);
  });
});

describe('after the runs', () => {
  it('lists the finished tasks and shows live pollers', async () => {
    const list = await call('get', '/v1/tasks?status=terminal&limit=100');
    expect(list.body.items).toHaveLength(TOOLSETS.length * 3);
    const status = await call('get', '/v1/status');
    expect(status.body.pollers_alive).toBe(2);
    expect(status.body.toolsets_available).toBe(TOOLSETS.length);
  });

  it('never showed a remote ID, session, server name, lease or worker ID', async () => {
    const secrets = new Set<string>([UPSTREAM_SERVER]);
    for (const row of await api.db.db.query(
      `SELECT remote_task_id, remote_session_id, lease_owner, lease_token, pinned_worker_id FROM task_rows`,
    )) {
      for (const value of Object.values(row))
        if (typeof value === 'string' && value.length >= 6) secrets.add(value);
    }
    for (const row of await api.db.db.query<{ id: string }>(`SELECT id FROM workers`))
      secrets.add(row.id);
    const remoteIds = await api.db.db.query(
      `SELECT remote_task_id FROM tasks WHERE remote_task_id IS NOT NULL`,
    );
    expect(remoteIds.length).toBeGreaterThanOrEqual(6); // the search has real values to look for
    const joined = bodies.join('\n');
    for (const secret of secrets)
      expect({ secret, found: joined.includes(secret) }).toEqual({ secret, found: false });
  });
});
