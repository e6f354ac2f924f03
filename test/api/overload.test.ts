// Guards against a 500 (or a hang) when the API's database cannot serve a request in time: with
// every pooled connection busy, a submit must get a 503 with Retry-After within the connect
// timeout and store nothing, while the submit holding the connection still lands once it can.
import request from 'supertest';
import { Client } from 'pg';
import { apiKeyFor, bearer, useApi } from '../helpers/api';
import { waitUntil } from '../helpers/wait';

// pg's connect timeout bounds both the wait for a pooled connection (the 503 under test) and
// opening one: the API's boot opens its connection under it. 300 ms failed that boot in a full
// Node 24 run on a loaded slow host ("Connection terminated due to connection timeout").
const CONNECT_TIMEOUT_MS = 2000;
const api = useApi({
  env: { DATABASE_POOL_SIZE: '1', DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS) },
});
const body = { toolset: 'report', arguments: { title: 'busy' } };

it('answers 503 with Retry-After while no pooled connection frees, and loses nothing', async () => {
  const olga = bearer(await apiKeyFor(api, 'olga'));
  const submit = (thread: string) =>
    request(api.url).post(`/v1/threads/${thread}/tasks`).set('Authorization', olga).send(body);
  // The first submit creates olga's quota bucket row (and warms the key cache).
  expect((await submit('first')).status).toBe(201);

  // Hold that row from outside: the next submit takes the API's only connection and waits on it.
  const holder = new Client({ connectionString: api.db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM submit_buckets WHERE user_id = 'olga' FOR UPDATE`);
    // supertest sends when its result is first awaited: .then starts this one now.
    const held = submit('held').then((res) => res);
    await waitUntil(async () => {
      const rows = await holder.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE application_name = 'mcp-task-gateway-api' AND wait_event_type = 'Lock'`,
      );
      return rows.rowCount === 1 || undefined;
    }, "the held submit waiting on olga's bucket row");

    const busy = await submit('busy');
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(busy.body).toMatchObject({ status: 503, detail: expect.stringMatching(/retry/) });
    expect(JSON.stringify(busy.body)).not.toMatch(/timeout exceeded|pg|postgres|SELECT/i);

    await holder.query('COMMIT');
    expect((await held).status).toBe(201);
  } finally {
    await holder.end();
  }
  const threads = await api.db.db.query<{ thread_id: string }>(
    `SELECT thread_id FROM tasks WHERE user_id = 'olga' ORDER BY created_at`,
  );
  expect(threads.map((row) => row.thread_id)).toEqual(['first', 'held']);
});
