// Guards against submit quotas that each API replica counts on its own (N replicas allowing N
// times the limit), refusals without Retry-After / retry_after_seconds / the quota's name, a
// refused submit that leaves a task, an event or a spent token behind, and a front-door refusal
// that is not the documented JSON-RPC error.
import request from 'supertest';
import { startNode } from '../helpers/node-process';
import { TestDatabase } from '../helpers/db';
import { useFleet } from '../helpers/fleet';
import { postMcp2026 } from '../front-door/front-door-harness';
import { apiKeyFor, bearer, catalogEntry, publishCatalog } from '../helpers/api';
import { insertTaskRow } from './task-rows';

/** Two API processes on one database: the deployment the quotas must hold across. */
interface Replicas {
  readonly db: TestDatabase;
  readonly urls: string[];
}

/** Registers a describe block's two replicas (started in order, on the fleet's database). */
function useReplicas(env: Record<string, string>): Replicas {
  const fleet = useFleet();
  const urls: string[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) urls.push((await fleet.api(env)).url);
    await publishCatalog({ db: fleet.database }, [catalogEntry()]);
  }, 90_000);
  return {
    get db() {
      return fleet.database;
    },
    urls,
  };
}

const body = { toolset: 'report', arguments: { title: 'q' } };

/** `count` concurrent submits of `auth`, alternating between the replicas. */
function burst(urls: string[], auth: string, count: number, thread = 'quota') {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      request(urls[i % urls.length])
        .post(`/v1/threads/${thread}/tasks`)
        .set('Authorization', auth)
        .send(body),
    ),
  );
}

/** `npm run quotas -- …` against the replicas' database: its exit code and JSON lines. */
async function quotasCli(
  db: TestDatabase,
  args: string[],
): Promise<{ code: number | null; rows: unknown[] }> {
  const cli = startNode('apps/cli/main.js', ['quotas', ...args], { DATABASE_URL: db.url });
  const code = await cli.exited;
  return { code, rows: cli.lines.map((line) => JSON.parse(line) as unknown) };
}

async function countRows(db: TestDatabase, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.db.query<{ n: number }>(sql, params);
  return row.n;
}

describe('active-task quota across two API replicas', () => {
  const replicas = useReplicas({
    MAX_ACTIVE_TASKS_PER_USER: '5',
    SUBMIT_RATE_LIMIT_PER_MINUTE: '100000',
  });

  it('40 concurrent submits on two replicas create exactly the limit; refusals leave nothing', async () => {
    const carol = bearer(await apiKeyFor(replicas, 'carol'));
    const answers = await burst(replicas.urls, carol, 40);
    const created = answers.filter((res) => res.status === 201);
    const refused = answers.filter((res) => res.status === 429);
    expect(created).toHaveLength(5);
    expect(refused).toHaveLength(35);
    for (const res of refused) {
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 429, quota: 'active_tasks' });
      expect(res.body.type).toMatch(/quota-exceeded$/);
      expect(res.body.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(res.headers['retry-after']).toBe(String(res.body.retry_after_seconds));
      expect(res.body.detail).toContain('5');
    }
    // Nothing half-created: only the accepted tasks exist, with no events for any other ID.
    const ids = created.map((res) => res.body.task_id as string).sort();
    const rows = await replicas.db.db.query<{ id: string }>(
      `SELECT id FROM tasks WHERE user_id = 'carol' ORDER BY id`,
    );
    expect(rows.map((row) => row.id)).toEqual(ids);
    expect(
      await countRows(
        replicas.db,
        `SELECT count(*)::int AS n FROM task_events e JOIN tasks t ON t.id = e.task_id
          WHERE t.user_id = 'carol' AND NOT (e.task_id = ANY($1))`,
        [ids],
      ),
    ).toBe(0);
    // A refusal spends no token: only the five inserts took one (the bucket refills meanwhile).
    const [bucket] = await replicas.db.db.query<{ tokens: number }>(
      `SELECT tokens FROM submit_buckets WHERE user_id = 'carol'`,
    );
    expect(bucket.tokens).toBeGreaterThanOrEqual(100000 - 5);

    // Once a task ends, the next submit fits again.
    await replicas.db.db.query(
      `UPDATE tasks SET status = 'cancelled', completed_at = now()
        WHERE id = $1`,
      [ids[0]],
    );
    const again = await burst(replicas.urls, carol, 4);
    expect(again.filter((res) => res.status === 201)).toHaveLength(1);
    // `Prefer: wait` is checked before any waiting: refused at once, nothing stored.
    const waited = await request(replicas.urls[1])
      .post('/v1/threads/quota/tasks')
      .set('Authorization', carol)
      .set('Prefer', 'wait=10')
      .send(body)
      .expect(429);
    expect(waited.body).toMatchObject({ quota: 'active_tasks' });
    expect(
      await countRows(replicas.db, `SELECT count(*)::int AS n FROM tasks WHERE user_id = $1`, [
        'carol',
      ]),
    ).toBe(6);
  });

  it('a replay of an accepted idempotent submit is answered even at the limit', async () => {
    const erin = bearer(await apiKeyFor(replicas, 'erin'));
    const first = await request(replicas.urls[0])
      .post('/v1/threads/quota/tasks')
      .set('Authorization', erin)
      .set('Idempotency-Key', 'k-1')
      .send(body)
      .expect(201);
    for (let i = 0; i < 4; i++) {
      await insertTaskRow(replicas.db.db, { user_id: 'erin', status: 'working' });
    }
    const replay = await request(replicas.urls[1])
      .post('/v1/threads/quota/tasks')
      .set('Authorization', erin)
      .set('Idempotency-Key', 'k-1')
      .send(body)
      .expect(200);
    expect(replay.body.task_id).toBe(first.body.task_id);
    await request(replicas.urls[1])
      .post('/v1/threads/quota/tasks')
      .set('Authorization', erin)
      .set('Idempotency-Key', 'k-2')
      .send(body)
      .expect(429);
  });

  it('`quotas set` overrides the default for one user only, on both replicas', async () => {
    expect(await quotasCli(replicas.db, ['set', 'frank', '--max-active', '2'])).toMatchObject({
      code: 0,
      rows: [{ user: 'frank', max_active_tasks: 2, submits_per_minute: null }],
    });
    expect((await quotasCli(replicas.db, ['set', 'frank', '--max-active', 'x'])).code).toBe(64);
    const frank = bearer(await apiKeyFor(replicas, 'frank'));
    const gina = bearer(await apiKeyFor(replicas, 'gina'));
    const frankAnswers = await burst(replicas.urls, frank, 6);
    const ginaAnswers = await burst(replicas.urls, gina, 6);
    expect(frankAnswers.filter((res) => res.status === 201)).toHaveLength(2);
    expect(ginaAnswers.filter((res) => res.status === 201)).toHaveLength(5);
    // Back to the default (5): three more fit.
    expect((await quotasCli(replicas.db, ['clear', 'frank'])).rows).toEqual([
      { user: 'frank', cleared: true },
    ]);
    expect((await quotasCli(replicas.db, ['list'])).rows).toEqual([]);
    const after = await burst(replicas.urls, frank, 6);
    expect(after.filter((res) => res.status === 201)).toHaveLength(3);
  });
});

describe('submits-per-minute quota across two API replicas', () => {
  const replicas = useReplicas({
    MAX_ACTIVE_TASKS_PER_USER: '0',
    SUBMIT_RATE_LIMIT_PER_MINUTE: '3',
  });

  it('30 concurrent submits on two replicas pass the one shared bucket, not one per replica', async () => {
    const hank = bearer(await apiKeyFor(replicas, 'hank'));
    const started = Date.now();
    const answers = await burst(replicas.urls, hank, 30);
    const elapsedSeconds = (Date.now() - started) / 1000;
    const created = answers.filter((res) => res.status === 201).length;
    // A full bucket (3) plus what it refilled during the burst (one token per 20 s); a bucket per
    // replica would have let 6 through.
    expect(created).toBeGreaterThanOrEqual(3);
    expect(created).toBeLessThanOrEqual(3 + Math.floor(elapsedSeconds / 20));
    const refused = answers.filter((res) => res.status === 429);
    expect(refused).toHaveLength(30 - created);
    for (const res of refused) {
      expect(res.body).toMatchObject({ quota: 'submits_per_minute' });
      expect(res.body.retry_after_seconds).toBeGreaterThanOrEqual(1);
      expect(res.body.retry_after_seconds).toBeLessThanOrEqual(20);
      expect(res.headers['retry-after']).toBe(String(res.body.retry_after_seconds));
    }
    expect(
      await countRows(replicas.db, `SELECT count(*)::int AS n FROM tasks WHERE user_id = $1`, [
        'hank',
      ]),
    ).toBe(created);
    // Per user: another user's bucket is full.
    const ivy = bearer(await apiKeyFor(replicas, 'ivy'));
    expect((await burst(replicas.urls, ivy, 1))[0].status).toBe(201);
  });

  it('the MCP front door refuses a spent quota with -32029, naming it and the delay', async () => {
    const jack = await apiKeyFor(replicas, 'jack');
    const call = (id: number) =>
      postMcp2026(
        replicas.urls[id % 2],
        jack,
        'tools/call',
        { name: 'report', arguments: { title: 'mcp' } },
        { id },
      );
    const answers = await Promise.all([0, 1, 2, 3, 4, 5].map(call));
    const tasks = answers.filter((res) => res.body.result?.resultType === 'task');
    const errors = answers.filter((res) => res.body.error !== undefined);
    expect(tasks.length).toBeGreaterThanOrEqual(3);
    expect(tasks.length + errors.length).toBe(6);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const res of errors) {
      expect(res.body.error.code).toBe(-32029);
      expect(res.body.error.data).toMatchObject({ quota: 'submits_per_minute' });
      expect(res.body.error.data.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    expect(
      await countRows(replicas.db, `SELECT count(*)::int AS n FROM tasks WHERE user_id = $1`, [
        'jack',
      ]),
    ).toBe(tasks.length);
  });
});
