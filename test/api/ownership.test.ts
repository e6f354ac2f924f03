// Guards against one user seeing, listing, cancelling or inferring another's tasks, a task
// showing under the wrong thread, and tasks of a deleted thread ever showing again.
import request from 'supertest';
import { apiKeyFor, bearer, signJwt, useApi } from '../helpers/api';
import { insertTaskRow } from './task-rows';

const api = useApi();
let alice: string;
let bob: string;

beforeAll(async () => {
  alice = bearer(await apiKeyFor(api, 'alice'));
  bob = bearer(signJwt('bob'));
});

const get = (auth: string, path: string) => request(api.url).get(path).set('Authorization', auth);
const post = (auth: string, path: string) => request(api.url).post(path).set('Authorization', auth);
const submit = (auth: string, thread: string, title = 't') =>
  post(auth, `/v1/threads/${thread}/tasks`).send({ toolset: 'report', arguments: { title } });

async function listIds(auth: string, path: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: request.Response = await get(
      auth,
      `${path}${path.includes('?') ? '&' : '?'}limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    ).expect(200);
    ids.push(...res.body.items.map((t: { task_id: string }) => t.task_id));
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
}

describe('ownership', () => {
  it("hides alice's task from bob: read, list, cancel and existence all look like nothing", async () => {
    const created = await submit(alice, 'shared-thread').expect(201);
    const id: string = created.body.task_id;
    const missing = 'task_' + 'a'.repeat(26);

    const bobRead = await get(bob, `/v1/threads/shared-thread/tasks/${id}`).expect(404);
    const bobMissing = await get(bob, `/v1/threads/shared-thread/tasks/${missing}`).expect(404);
    expect(bobRead.text).toBe(bobMissing.text); // same answer as a task that does not exist

    const bobCancel = await post(bob, `/v1/threads/shared-thread/tasks/${id}/cancel`).expect(404);
    const bobCancelMissing = await post(
      bob,
      `/v1/threads/shared-thread/tasks/${missing}/cancel`,
    ).expect(404);
    expect(bobCancel.text).toBe(bobCancelMissing.text);
    const [row] = await api.db.db.query(
      `SELECT cancel_requested_at, status FROM tasks WHERE id = $1`,
      [id],
    );
    expect(row).toEqual({ cancel_requested_at: null, status: 'queued' });

    expect(await listIds(bob, '/v1/threads/shared-thread/tasks')).toEqual([]);
    expect(await listIds(bob, '/v1/tasks')).not.toContain(id);
    expect(await listIds(alice, '/v1/threads/shared-thread/tasks')).toEqual([id]);

    // bob deleting a thread with the same ID touches only his own tasks
    await request(api.url)
      .delete('/v1/threads/shared-thread')
      .set('Authorization', bob)
      .expect(204);
    await get(alice, `/v1/threads/shared-thread/tasks/${id}`).expect(200);

    // the same idempotency key is per user: bob's use of alice's key makes his own task
    const key = { 'Idempotency-Key': 'same-key' };
    const a = await submit(alice, 'k').set(key).expect(201);
    const b = await submit(bob, 'k').set(key).expect(201);
    expect(b.body.task_id).not.toBe(a.body.task_id);
  });

  it('answers 404 for a task under another thread of the same user', async () => {
    const id: string = (await submit(alice, 'thread-x').expect(201)).body.task_id;
    await get(alice, `/v1/threads/thread-x/tasks/${id}`).expect(200);
    await get(alice, `/v1/threads/thread-y/tasks/${id}`).expect(404);
    await post(alice, `/v1/threads/thread-y/tasks/${id}/cancel`).expect(404);
    expect(await listIds(alice, '/v1/threads/thread-y/tasks')).toEqual([]);
  });

  it("never shows a deleted thread's tasks again, even when the thread ID is reused", async () => {
    const queued: string = (await submit(alice, 'doomed').expect(201)).body.task_id;
    const working = await insertTaskRow(api.db.db, {
      thread_id: 'doomed',
      status: 'working',
      submitted_at: new Date(),
    });
    const done = await insertTaskRow(api.db.db, {
      thread_id: 'doomed',
      status: 'completed',
      result: '{"ok":true}',
    });
    const elsewhere = await insertTaskRow(api.db.db, { thread_id: 'kept' });
    expect(await listIds(alice, '/v1/threads/doomed/tasks')).toHaveLength(3);

    await request(api.url).delete('/v1/threads/doomed').set('Authorization', alice).expect(204);
    await request(api.url).delete('/v1/threads/doomed').set('Authorization', alice).expect(204);

    // active tasks were cancelled on the way: at once if not yet submitted, else requested
    const rows = await api.db.db.query<{
      id: string;
      status: string;
      cancel_requested_at: Date | null;
    }>(`SELECT id, status, cancel_requested_at FROM tasks WHERE thread_id = 'doomed'`);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(queued)?.status).toBe('cancelled');
    expect(byId.get(working)?.cancel_requested_at).not.toBeNull();
    expect(byId.get(done)?.status).toBe('completed');

    const reused: string = (await submit(alice, 'doomed').expect(201)).body.task_id;
    for (const id of [queued, working, done]) {
      await get(alice, `/v1/threads/doomed/tasks/${id}`).expect(404);
      await post(alice, `/v1/threads/doomed/tasks/${id}/cancel`).expect(404);
    }
    expect(await listIds(alice, '/v1/threads/doomed/tasks')).toEqual([reused]);
    for (const status of ['active', 'terminal', 'cancelled', 'completed', 'working']) {
      const ids = await listIds(alice, `/v1/tasks?status=${status}`);
      for (const id of [queued, working, done]) expect(ids).not.toContain(id);
    }
    const all = await listIds(alice, '/v1/tasks');
    expect(all).toContain(reused);
    expect(all).toContain(elsewhere);
  });
});
