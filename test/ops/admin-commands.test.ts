// Guards against operator commands that race a live lease, lose track of who did what, or cannot unstick real work.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import request from 'supertest';
import { ApiProcess, bearer, createKeyWithCli } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { WebhookReceiver } from '../events/webhook-receiver';
import { startNode } from '../helpers/node-process';
import { waitUntil } from '../helpers/wait';
import {
  DemoServerProcess,
  PollerProcess,
  demoServerEntry,
  writeServersFile,
} from '../helpers/processes';

const TOOLSET = 'admin-ordinary';
const SYNC = `${TOOLSET}-sync`;
const ADMIN = `ops-admin-${process.pid}`;
const USER = `ops-user-${process.pid}`;

const fleet = useFleet();
let api: ApiProcess;
let demo: DemoServerProcess;
let poller: PollerProcess;
let serversFile: string;
let userAuth: string;
let adminAuth: string;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  api = await fleet.api({
    ADMIN_USERS: `someone-else, ${ADMIN}`,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  });
  demo = await fleet.demo();
  serversFile = writeServersFile({ demo: demoServerEntry(demo.url, TOOLSET, { sync: true }) });
  // This poller refuses private webhook destinations: deliveries to the loopback receiver are
  // dead-lettered at once, for real.
  poller = await fleet.poller(serversFile);
  userAuth = bearer(await createKeyWithCli(fleet.url, USER));
  adminAuth = bearer(await createKeyWithCli(fleet.url, ADMIN));
  await receiver.start();
  await waitUntil(
    async () => {
      const res = await request(api.url).get('/v1/toolsets').set('Authorization', userAuth);
      const items = (res.body as { items?: Array<{ name: string; available: boolean }> }).items;
      return items?.filter((t) => t.available).length === 2 ? true : undefined;
    },
    'both toolsets available',
    20_000,
  );
}, 60_000);

// After the fleet's own afterAll: its pollers, demo server and API have stopped by then.
afterAll(async () => {
  await receiver.stop();
  if (serversFile) rmSync(dirname(serversFile), { recursive: true, force: true });
});

/* eslint-disable @typescript-eslint/no-explicit-any -- the CLI's JSON lines, read field by field */
/** `npm run admin -- …` as an operator runs it: exit code and its JSON lines. */
async function admin(...args: string[]): Promise<{ code: number | null; rows: any[] }> {
  const cli = startNode('apps/cli/main.js', ['admin', ...args, '--actor', 'alice'], {
    DATABASE_URL: fleet.url,
  });
  const code = await cli.exited;
  return { code, rows: cli.lines.map((l) => JSON.parse(l) as unknown) };
}

async function submit(toolset: string, args: Record<string, unknown>): Promise<string> {
  const res = await request(api.url)
    .post('/v1/threads/admin-thread/tasks')
    .set('Authorization', userAuth)
    .send({ toolset, arguments: args });
  expect(res.status).toBe(201);
  return (res.body as { task_id: string }).task_id;
}

async function taskRow(
  id: string,
): Promise<{ status: string; leased: boolean; error_code: string | null }> {
  const rows = await fleet.db.query<{
    status: string;
    leased: boolean;
    error_code: string | null;
  }>(
    `SELECT status, coalesce(lease_expires_at > now(), false) AS leased, error_code FROM task_rows WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** A task that backed off for an hour: what a flaky upstream leaves behind. */
async function pushBack(id: string): Promise<void> {
  // Between two polls (no live lease): the same moment a real backoff would be written.
  await waitUntil(
    async () => {
      const rows = await fleet.db.query(
        `WITH lease AS (
           UPDATE task_leases SET next_attempt_at = now() + interval '1 hour'
            WHERE task_id = $1 AND (lease_expires_at IS NULL OR lease_expires_at <= now())
           RETURNING task_id
         )
         UPDATE tasks SET created_at = now() - interval '20 minutes',
                          consecutive_errors = 3, last_error = 'upstream unreachable'
           FROM lease WHERE tasks.id = lease.task_id
         RETURNING tasks.id`,
        [id],
      );
      return rows.length === 1 ? true : undefined;
    },
    'the task between two polls',
    20_000,
  );
}

describe('admin routes need an admin principal', () => {
  it('answers 403 to a user not in ADMIN_USERS and 200 to one who is', async () => {
    const denied = await request(api.url).get('/v1/admin/actions').set('Authorization', userAuth);
    expect(denied.status).toBe(403);
    const allowed = await request(api.url).get('/v1/admin/actions').set('Authorization', adminAuth);
    expect(allowed.status).toBe(200);
    expect((await request(api.url).get('/v1/admin/actions')).status).toBe(401);
  });
});

describe('admin parameters are refused as on every other route', () => {
  it('answers 400 naming a malformed or repeated query parameter, or a malformed ID', async () => {
    const get = (path: string) => request(api.url).get(path).set('Authorization', adminAuth);
    const cases: Array<[string, string, string]> = [
      // A repeated filter used to reach the query as an array and match nothing, silently.
      ['/v1/admin/stuck-tasks?server=demo&server=other', 'server', 'must be given once'],
      ['/v1/admin/stuck-tasks?status=done', 'status', 'must be queued, working or input_required'],
      ['/v1/admin/stuck-tasks?limit=10&limit=20', 'limit', 'must be given once'],
      ['/v1/admin/dead-letters?limit=-1', 'limit', 'must be a non-negative integer'],
      ['/v1/admin/actions?limit=ten', 'limit', 'must be a non-negative integer'],
    ];
    for (const [path, name, message] of cases) {
      const answer = await get(path);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(answer.body).toMatchObject({ errors: [{ path: name, message }] });
    }
    const badId = await request(api.url)
      .post('/v1/admin/tasks/not-a-task-id/redrive')
      .set('Authorization', adminAuth)
      .send({});
    expect(badId.status).toBe(400);
    expect(badId.body).toMatchObject({ errors: [{ path: 'task_id' }] });
    // The body's reason is still a 422, as any invalid body is.
    const badReason = await request(api.url)
      .post('/v1/admin/webhook-deliveries/1/replay')
      .set('Authorization', adminAuth)
      .send({ reason: '' });
    expect(badReason.status).toBe(422);
    expect(badReason.body).toMatchObject({ errors: [{ path: '/reason' }] });
  });
});

describe('stuck tasks and re-drive', () => {
  it('lists a backed-off task by status, age and server, and a re-drive runs it now', async () => {
    // 8 s: still working when the wait below sees it and the push-back finds it between polls.
    const id = await submit(TOOLSET, { duration_ms: 8_000 });
    // Wait until it is working (submitted upstream), then make it look an hour away.
    await waitUntil(
      async () => ((await taskRow(id)).status === 'working' ? true : undefined),
      'working',
      20_000,
    );
    await pushBack(id);

    const stuck = await admin(
      'stuck',
      '--status',
      'working',
      '--server',
      'demo',
      '--older-than',
      '600',
    );
    expect(stuck.code).toBe(0);
    expect(stuck.rows.map((r) => r.id)).toContain(id);
    const row = stuck.rows.find((r) => r.id === id);
    expect(row).toMatchObject({
      status: 'working',
      server: 'demo',
      toolset: TOOLSET,
      leased: false,
    });
    expect(row.age_seconds).toBeGreaterThanOrEqual(1200 - 5);
    expect(row.idle_seconds).toBeLessThan(60);
    expect((await admin('stuck', '--server', 'other')).rows).toEqual([]);

    const redrive = await admin('redrive', id, '--reason', 'upstream is back');
    expect(redrive).toMatchObject({ code: 0, rows: [{ outcome: 'ok' }] });
    // Without the re-drive this task would wait an hour; the real poller finishes it now.
    await waitUntil(
      async () => ((await taskRow(id)).status === 'completed' ? true : undefined),
      'completed',
      20_000,
    );
    expect((await admin('redrive', id)).rows[0]).toMatchObject({ outcome: 'terminal' });
  }, 60_000);
});

describe('force-fail is fenced like every write', () => {
  it('is refused while a poller holds a live lease, and ends an unleased task failed_by_operator', async () => {
    const held = await submit(SYNC, { duration_ms: 15_000 });
    await waitUntil(
      async () => ((await taskRow(held)).leased ? true : undefined),
      'held by the poller',
      20_000,
    );
    const refused = await admin('fail', held, '--reason', 'wedged');
    expect(refused.code).toBe(5);
    expect(refused.rows[0]).toMatchObject({ outcome: 'leased' });
    const viaApi = await request(api.url)
      .post(`/v1/admin/tasks/${held}/fail`)
      .set('Authorization', adminAuth)
      .send({ reason: 'wedged' });
    expect(viaApi.status).toBe(409);
    expect((await taskRow(held)).status).toBe('working');

    const parked = await submit(TOOLSET, { duration_ms: 60_000 });
    await waitUntil(
      async () => ((await taskRow(parked)).status === 'working' ? true : undefined),
      'working',
      20_000,
    );
    await pushBack(parked);
    const failed = await request(api.url)
      .post(`/v1/admin/tasks/${parked}/fail`)
      .set('Authorization', adminAuth)
      .send({ reason: 'customer asked us to stop it' });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ outcome: 'ok' });
    const seen = await request(api.url)
      .get(`/v1/threads/admin-thread/tasks/${parked}`)
      .set('Authorization', userAuth);
    expect(seen.body).toMatchObject({
      status: 'failed',
      error: { code: 'failed_by_operator', message: "The gateway's operators ended the task." },
    });
    const badReason = await request(api.url)
      .post(`/v1/admin/tasks/${parked}/fail`)
      .set('Authorization', adminAuth)
      .send({});
    expect(badReason.status).toBe(422);

    // The user's cancel ends the held call (the operator's fail could not): left running, it
    // would hold the poller's drain in the next test for the rest of its 15 s.
    const cancel = await request(api.url)
      .post(`/v1/threads/admin-thread/tasks/${held}/cancel`)
      .set('Authorization', userAuth);
    expect(cancel.status).toBe(202);
    await waitUntil(
      async () => ((await taskRow(held)).status === 'cancelled' ? true : undefined),
      'the held call cancelled',
      20_000,
    );
  }, 60_000);
});

describe('dead-lettered webhook deliveries', () => {
  it('lists a dead letter and replays it to a receiver a poller may now reach', async () => {
    const url = receiver.route('/hook', 'unknown-yet');
    const hook = await request(api.url)
      .post('/v1/webhooks')
      .set('Authorization', userAuth)
      .send({ url });
    expect(hook.status).toBe(201);
    receiver.route('/hook', (hook.body as { secret: string }).secret);
    await submit(TOOLSET, { duration_ms: 50 });
    const dead = await waitUntil(
      async () => {
        const list = await admin('dead-letters');
        return list.rows.length > 0 ? list.rows : undefined;
      },
      'a dead-lettered delivery',
      30_000,
    );
    expect(dead[0].last_error).toMatch(/refused/);
    const viaApi = await request(api.url)
      .get('/v1/admin/dead-letters')
      .set('Authorization', adminAuth);
    expect((viaApi.body as { items: { id: string }[] }).items.map((d) => d.id)).toContain(
      dead[0].id,
    );

    // The fix: a poller allowed to reach the receiver replaces the one that refused it.
    await poller.terminate();
    poller = await fleet.poller(serversFile, { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const replay = await admin('replay', dead[0].id, '--reason', 'receiver allowed now');
    expect(replay).toMatchObject({ code: 0, rows: [{ outcome: 'ok' }] });
    await waitUntil(
      async () => (receiver.at('/hook').length > 0 ? true : undefined),
      'delivered',
      20_000,
    );
    expect(receiver.at('/hook').every((r) => r.verified)).toBe(true);
    expect((await admin('replay', dead[0].id)).rows[0]).toMatchObject({ outcome: 'not_dead' });
  }, 90_000);
});

describe('the operator action log', () => {
  it('records who did what, when, and how it ended, for every write and only writes', async () => {
    const log = await admin('actions', '--limit', '100');
    expect(log.code).toBe(0);
    const summary = log.rows.map((r) => [r.actor, r.via, r.action, r.outcome]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['alice', 'cli', 'redrive', 'ok'],
        ['alice', 'cli', 'redrive', 'terminal'],
        ['alice', 'cli', 'force_fail', 'leased'],
        [ADMIN, 'api', 'force_fail', 'leased'],
        [ADMIN, 'api', 'force_fail', 'ok'],
        ['alice', 'cli', 'replay_delivery', 'ok'],
        ['alice', 'cli', 'replay_delivery', 'not_dead'],
      ]),
    );
    expect(summary).toHaveLength(7);
    const ok = log.rows.find((r) => r.action === 'force_fail' && r.outcome === 'ok');
    expect(ok.reason).toBe('customer asked us to stop it');
    expect(Date.now() - new Date(ok.created_at as string).getTime()).toBeLessThan(120_000);
    const viaApi = await request(api.url).get('/v1/admin/actions').set('Authorization', adminAuth);
    expect((viaApi.body as { items: unknown[] }).items).toHaveLength(7);
  });
});
