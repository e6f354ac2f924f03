// Guards against answers to a task's questions being lost, stored for keys nobody asked, stored
// twice or differently, accepted for another user's task, or accepted where nothing can deliver
// them; and against the stored answer not making the row due for a poller.
import request from 'supertest';
import { apiKeyFor, bearer, useApi } from '../helpers/api';
import { insertTaskRow } from './task-rows';

const api = useApi();
let alice: string;
let bob: string;

const REQUESTS = {
  name: {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: 'Your name?',
      requestedSchema: {
        type: 'object',
        properties: { name: { type: 'string', minLength: 1 } },
        required: ['name'],
      },
    },
  },
  confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Go?' } },
};
const NAME = { action: 'accept', content: { name: 'Ada' } };
const CONFIRM = { action: 'accept', content: { confirm: true } };

beforeAll(async () => {
  alice = await apiKeyFor(api, 'alice');
  bob = await apiKeyFor(api, 'bob');
});

async function waiting(columns: Record<string, unknown> = {}): Promise<string> {
  return insertTaskRow(api.db.db, {
    contract: 'mcp-tasks',
    status: 'input_required',
    submitted_at: new Date(),
    remote_task_id: 'tk-1',
    next_attempt_at: new Date(Date.now() + 3_600_000),
    input_required: JSON.stringify({ requests: REQUESTS }),
    ...columns,
  });
}

function post(id: string, body: unknown, key = alice) {
  return request(api.url)
    .post(`/v1/threads/thread-1/tasks/${id}/input`)
    .set('Authorization', bearer(key))
    .send(body as object);
}

async function stored(id: string): Promise<Record<string, unknown>> {
  const [row] = await api.db.db.query<{ input_responses: Record<string, unknown> }>(
    `SELECT input_responses FROM tasks WHERE id = $1`,
    [id],
  );
  return row.input_responses ?? {};
}

it('stores a partial answer durably, 202 with the task still waiting for the rest, due now', async () => {
  const id = await waiting();
  const res = await post(id, { responses: { name: NAME } });
  expect(res.status).toBe(202);
  expect(res.body.status).toBe('input_required');
  expect(res.body.input_required).toEqual({ requests: { confirm: REQUESTS.confirm } });
  expect(await stored(id)).toEqual({
    name: { response: NAME, received_at: expect.any(String) as string },
  });
  const [due] = await api.db.db.query<{ due: boolean }>(
    `SELECT next_attempt_at <= now() AS due FROM task_rows WHERE id = $1`,
    [id],
  );
  expect(due.due).toBe(true);
  // The rest, later: both stored.
  expect((await post(id, { responses: { confirm: CONFIRM } })).status).toBe(202);
  expect(Object.keys(await stored(id)).sort()).toEqual(['confirm', 'name']);
  const shown = await request(api.url)
    .get(`/v1/threads/thread-1/tasks/${id}`)
    .set('Authorization', bearer(alice));
  expect(shown.body.input_required).toEqual({ requests: {} });
});

it('the same answer POSTed twice is harmless; a different one for the key is a 409', async () => {
  const id = await waiting();
  expect((await post(id, { responses: { name: NAME } })).status).toBe(202);
  const first = await stored(id);
  expect((await post(id, { responses: { name: NAME } })).status).toBe(202);
  expect(await stored(id)).toEqual(first);
  const other = await post(id, {
    responses: { name: { action: 'accept', content: { name: 'Bo' } } },
  });
  expect(other.status).toBe(409);
  expect(other.body.detail).toMatch(/Already answered differently: "name"/);
  expect(await stored(id)).toEqual(first);
});

it("another user's task is a 404, and nothing is stored", async () => {
  const id = await waiting();
  const res = await post(id, { responses: { name: NAME } }, bob);
  expect(res.status).toBe(404);
  expect(await stored(id)).toEqual({});
});

it('409 when the task is not waiting for input, or cannot take answers', async () => {
  const working = await waiting({ status: 'working' });
  const res = await post(working, { responses: { name: NAME } });
  expect(res.status).toBe(409);
  expect(res.body.detail).toBe('The task is working, not waiting for input.');
  const shownOnly = await waiting({
    input_required: JSON.stringify({ requests: REQUESTS, answerable: false }),
  });
  const refused = await post(shownOnly, { responses: { name: NAME } });
  expect(refused.status).toBe(409);
  expect(refused.body.detail).toMatch(/cannot take answers/);
  expect(await stored(working)).toEqual({});
  expect(await stored(shownOnly)).toEqual({});
});

it('422 names each answer that does not fit: unknown key, bad action, content off schema', async () => {
  const id = await waiting();
  const res = await post(id, {
    responses: {
      nope: CONFIRM,
      confirm: { action: 'maybe' },
      name: { action: 'accept', content: { name: '' } },
    },
  });
  expect(res.status).toBe(422);
  expect(res.body.errors).toEqual(
    expect.arrayContaining([
      { path: '/responses/nope', message: 'is not an open question of this task' },
      { path: '/responses/confirm/action', message: 'must be one of accept, decline, cancel' },
      { path: '/responses/name/content/name', message: expect.any(String) as string },
    ]),
  );
  // Declining needs no content.
  expect((await post(id, { responses: { name: { action: 'decline' } } })).status).toBe(202);
  for (const body of [{}, { responses: {} }, { responses: [] }, { responses: {}, x: 1 }, []]) {
    const bad = await post(id, body);
    expect(bad.status).toBe(422);
  }
});
