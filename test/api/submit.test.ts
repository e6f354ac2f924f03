// Guards against duplicate tasks from retried submits, a `Prefer: wait` that answers late or
// early, lost or repeated items across list pages, and an unlimited submit rate.
import request from 'supertest';
import { waitUntil } from '../helpers/wait';
import { apiKeyFor, bearer, catalogEntry, publishCatalog, startApi, useApi } from '../helpers/api';
import { insertTaskRow } from './task-rows';

const api = useApi({
  catalog: [
    catalogEntry(),
    catalogEntry({
      name: 'parked',
      available: false,
      unavailableReason: 'server srv-internal-x7q is parked after 5 failed connects',
    }),
  ],
});
let alice: string;

beforeAll(async () => {
  alice = bearer(await apiKeyFor(api, 'alice'));
});

const submit = (thread: string, body: unknown, headers: Record<string, string> = {}) => {
  let req = request(api.url).post(`/v1/threads/${thread}/tasks`).set('Authorization', alice);
  for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
  return req.send(body as object);
};
const body = { toolset: 'report', arguments: { title: 'q3', pages: 2 }, metadata: { ticket: 7 } };

describe('idempotency', () => {
  it('20 concurrent POSTs with one key create one task', async () => {
    const key = { 'Idempotency-Key': 'retry-me-1' };
    const answers = await Promise.all(Array.from({ length: 20 }, () => submit('idem', body, key)));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual(
      [200, ...Array(19).fill(200)].map((s, i) => (i === 0 ? 201 : s)).sort(),
    );
    const ids = new Set(answers.map((a) => a.body.task_id));
    expect(ids.size).toBe(1);
    const [{ n }] = await api.db.db.query(
      `SELECT count(*)::int AS n FROM tasks WHERE idempotency_key = 'retry-me-1'`,
    );
    expect(n).toBe(1);
    for (const a of answers)
      expect(a.headers.location).toBe(`/v1/threads/idem/tasks/${[...ids][0]}`);
  });

  it('treats key order as the same body, and another body or thread as a 422', async () => {
    const key = { 'Idempotency-Key': 'retry-me-2' };
    const first = await submit('idem', body, key).expect(201);
    const reordered = {
      metadata: { ticket: 7 },
      arguments: { pages: 2, title: 'q3' },
      toolset: 'report',
    };
    expect((await submit('idem', reordered, key).expect(200)).body.task_id).toBe(
      first.body.task_id,
    );
    const other = await submit('idem', { ...body, arguments: { title: 'q4' } }, key).expect(422);
    expect(other.body.errors).toEqual([{ path: 'Idempotency-Key', message: expect.any(String) }]);
    await submit('other-thread', body, key).expect(422);
    const [{ n }] = await api.db.db.query(
      `SELECT count(*)::int AS n FROM tasks WHERE idempotency_key = 'retry-me-2'`,
    );
    expect(n).toBe(1);
  });

  it('does not replay a task of a deleted thread', async () => {
    const key = { 'Idempotency-Key': 'retry-me-3' };
    await submit('gone', body, key).expect(201);
    await request(api.url).delete('/v1/threads/gone').set('Authorization', alice).expect(204);
    const again = await submit('gone', body, key).expect(422);
    expect(again.text).not.toContain('task_');
  });
});

describe('Prefer: wait', () => {
  it('answers as soon as the task ends, not when it leaves queued', async () => {
    const answer = submit(
      'wait',
      { toolset: 'report', arguments: { title: 'w1' } },
      { Prefer: 'wait=10' },
    ).then((r) => ({ r, at: Date.now() }));
    const id = await waitUntil(
      async () => {
        const rows = await api.db.db.query<{ id: string }>(
          `SELECT id FROM tasks WHERE thread_id = 'wait' AND input->>'title' = 'w1'`,
        );
        return rows[0]?.id;
      },
      'the submitted row',
      10_000,
    );
    await api.db.db.query(
      `UPDATE tasks SET status = 'working', submitted_at = now() WHERE id = $1`,
      [id],
    );
    // Still held while working (docs/api.md, "Behaviour worth knowing"): the answer is the ended task.
    const flippedAt = Date.now();
    await api.db.db.query(
      `UPDATE tasks SET status = 'completed', completed_at = now(), result = '{"ok":1}' WHERE id = $1`,
      [id],
    );
    const { r, at } = await answer;
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'completed', result: { ok: 1 } });
    expect(r.headers['preference-applied']).toBe('wait=10');
    // Answered on the change, long before the 10 s wait would have run out.
    expect(at - flippedAt).toBeLessThan(5000);
  });

  it('never holds longer than N seconds, and caps N at 30', async () => {
    const started = Date.now();
    const r = await submit(
      'wait',
      { toolset: 'report', arguments: { title: 'w2' } },
      { Prefer: 'respond-async, wait=1' },
    );
    const elapsed = Date.now() - started;
    expect(r.status).toBe(201);
    expect(r.body.status).toBe('queued');
    expect(r.headers['preference-applied']).toBe('wait=1');
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5000);

    const capped = submit(
      'wait',
      { toolset: 'report', arguments: { title: 'w3' } },
      { Prefer: 'wait=3600' },
    ).then((r) => r); // supertest sends on then()
    const id = await waitUntil(
      async () => {
        const rows = await api.db.db.query<{ id: string }>(
          `SELECT id FROM tasks WHERE input->>'title' = 'w3'`,
        );
        return rows[0]?.id;
      },
      'the capped row',
      10_000,
    );
    await api.db.db.query(
      `UPDATE tasks SET status = 'failed', error_code = 'submit_rejected', error_message = 'no', completed_at = now() WHERE id = $1`,
      [id],
    );
    const c = await capped;
    expect(c.headers['preference-applied']).toBe('wait=30');
    expect(c.body.error).toEqual({
      code: 'submit_rejected',
      message: 'The upstream server refused the task: no',
    });
  });

  it('ignores a malformed preference', async () => {
    const r = await submit(
      'wait',
      { toolset: 'report', arguments: { title: 'w4' } },
      { Prefer: 'wait=soon' },
    ).expect(201);
    expect(r.headers['preference-applied']).toBeUndefined();
  });
});

describe('unavailable toolsets', () => {
  it('accepts the task, which says why it waits (without the server name)', async () => {
    const r = await submit('u', { toolset: 'parked', arguments: { title: 'x' } }).expect(201);
    expect(r.body.status).toBe('queued');
    expect(r.body.last_error).toBe(
      'Toolset parked is unavailable right now; the task waits until it is available.',
    );
    expect(r.text).not.toContain('srv-internal-x7q');
    const toolsets = await request(api.url)
      .get('/v1/toolsets')
      .set('Authorization', alice)
      .expect(200);
    expect(toolsets.text).not.toContain('srv-internal-x7q');
    expect(toolsets.body.items.map((t: { name: string }) => t.name)).toEqual(['parked', 'report']);
  });
});

describe('pagination', () => {
  it('returns every task exactly once, newest first, across microsecond-close timestamps', async () => {
    const base = '2025-06-01T10:00:00.123';
    const times = ['456', '456', '455', '400', '000', '000', '999'].map((us) => `${base}${us}Z`);
    const ids: { id: string; at: string }[] = [];
    for (const at of times)
      ids.push({ id: await insertTaskRow(api.db.db, { thread_id: 'pages', created_at: at }), at });
    const expected = [...ids]
      .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
      .map((x) => x.id);
    for (const limit of [1, 2, 3, 7, 100]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const q: string = `/v1/threads/pages/tasks?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await request(api.url).get(q).set('Authorization', alice).expect(200);
        expect(res.body.items.length).toBeLessThanOrEqual(limit);
        seen.push(...res.body.items.map((t: { task_id: string }) => t.task_id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(expected);
    }
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once a user spends the per-minute budget', async () => {
    const limited = await startApi({ SUBMIT_RATE_LIMIT_PER_MINUTE: '3' });
    try {
      await publishCatalog(limited, [catalogEntry()]);
      const carol = bearer(await apiKeyFor(limited, 'carol'));
      const dave = bearer(await apiKeyFor(limited, 'dave'));
      const go = (auth: string) =>
        request(limited.url)
          .post('/v1/threads/r/tasks')
          .set('Authorization', auth)
          .send({ toolset: 'report', arguments: { title: 'r' } });
      for (let i = 0; i < 3; i++) await go(carol).expect(201);
      const refused = await go(carol).expect(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(20);
      expect(refused.body.type).toMatch(/quota-exceeded$/);
      await go(dave).expect(201); // per user
      await request(limited.url).get('/v1/tasks').set('Authorization', carol).expect(200); // submits only
    } finally {
      await limited.close();
    }
  });
});

describe('catalog freshness', () => {
  // The API remembers the last catalog entry it read per toolset; every change to the row must
  // still reach the very next submit.
  it('a republished schema, a parked server and a removal each reach the next submit', async () => {
    const evolving = catalogEntry({ name: 'evolving' });
    await publishCatalog(api, [evolving]);
    const job = { toolset: 'evolving', arguments: { title: 'v1' } };
    await submit('fresh', job).expect(201);
    await submit('fresh', job).expect(201); // now served from the remembered entry
    await publishCatalog(api, [
      {
        ...evolving,
        inputSchema: {
          ...evolving.inputSchema,
          properties: { title: { type: 'string' }, owner: { type: 'string' } },
          required: ['title', 'owner'],
        },
      },
    ]);
    const refused = await submit('fresh', job).expect(422);
    expect(refused.body.errors).toEqual([{ path: '/arguments/owner', message: 'is required' }]);
    // As a poller publishes a server it lost: every toolset of it unavailable, with a reason.
    await api.db.db.query(
      `UPDATE toolsets SET available = false, unavailable_reason = 'parked', updated_at = now()
        WHERE server = 'srv-internal-x7q'`,
    );
    const parked = await submit('fresh', { ...job, arguments: { title: 'v2', owner: 'o' } });
    expect(parked.status).toBe(201);
    expect(parked.body.last_error).toMatch(/unavailable right now/);
    await api.db.db.query(`UPDATE toolsets SET removed_at = now() WHERE name = 'evolving'`);
    await submit('fresh', { ...job, arguments: { title: 'v3', owner: 'o' } }).expect(422);
    await api.db.db.query(`DELETE FROM toolsets WHERE name = 'evolving'`);
    const gone = await submit('fresh', { ...job, arguments: { title: 'v4', owner: 'o' } });
    expect(gone.status).toBe(422);
    expect(gone.body.errors).toEqual([
      { path: '/toolset', message: expect.stringMatching(/not a toolset/) },
    ]);
    // Restore what the other tests of this file expect of 'report'.
    await publishCatalog(api, [catalogEntry()]);
  });
});
