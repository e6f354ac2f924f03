// Guards the API's own lifecycle: readiness answers 503 (not 200, not a 500) while its database
// refuses connections and recovers with it; after SIGTERM readiness answers 503 while the other
// routes still serve for SHUTDOWN_DELAY_MS (docs/operations.md, "Grace periods"); SIGTERM ends
// open event streams, still answers a submit held by `Prefer: wait` (the accepted task is not
// lost), then exits.
import request from 'supertest';
import { adminQuery } from '../helpers/db';
import { SseClient } from '../helpers/sse';
import {
  ApiHarness,
  apiKeyFor,
  bearer,
  catalogEntry,
  publishCatalog,
  startApi,
} from '../helpers/api';
import { waitUntil } from '../helpers/wait';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Runs `sql` on the server's admin database (not the API's own). */
const admin = (sql: string): Promise<void> => adminQuery(process.env.TEST_ADMIN_DATABASE_URL!, sql);

it('readiness is 503 while the database refuses connections, and 200 again once it is back', async () => {
  api = await startApi();
  const ready = () => fetch(`${api!.url}/healthz/ready`);
  expect((await ready()).status).toBe(200);
  const name = new URL(api.db.url).pathname.slice(1);
  await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
  try {
    await admin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
    );
    const down = await waitUntil(async () => {
      const res = await ready();
      return res.status === 200 ? undefined : res;
    }, 'readiness to fail with the database gone');
    expect(down.status).toBe(503);
    // Liveness does no I/O: the process is fine, only not ready.
    expect((await fetch(`${api.url}/healthz/live`)).status).toBe(200);
  } finally {
    await admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
  }
  await waitUntil(
    async () => ((await ready()).status === 200 ? true : undefined),
    'readiness to recover with the database',
    30_000,
  );
});

it('SIGTERM ends open event streams, answers a held Prefer: wait submit, then exits', async () => {
  api = await startApi();
  await publishCatalog(api, [catalogEntry()]);
  const key = await apiKeyFor(api, 'alice');
  const stream = await SseClient.open(`${api.url}/v1/threads/t1/events`, key);
  expect(stream.res.statusCode).toBe(200);
  let answered = false;
  // Ended by the API at shutdown, ahead of the held submit: an open stream would otherwise keep
  // the HTTP server (and the process) open until the client left.
  const streamEnded = new Promise<boolean>((resolve) =>
    stream.res.once('end', () => resolve(answered)),
  );
  // No poller runs: the task stays queued, so the submit is held for its whole wait.
  const held = request(api.url)
    .post('/v1/threads/t1/tasks')
    .set('Authorization', bearer(key))
    .set('Prefer', 'wait=10')
    .send({ toolset: 'report', arguments: { title: 'held' } })
    .then((res) => {
      answered = true;
      return res;
    });
  await waitUntil(async () => {
    const rows = await api!.db.db.query(`SELECT 1 FROM tasks WHERE thread_id = 't1'`);
    return rows.length > 0 ? true : undefined;
  }, 'the held submit to be stored');
  const exited = api.process.kill('SIGTERM');
  const answer = await held;
  expect(answer.status).toBe(201);
  expect(answer.body.status).toBe('queued');
  const [row] = await api.db.db.query<{ id: string; status: string }>(
    `SELECT id, status FROM tasks WHERE thread_id = 't1'`,
  );
  expect(row).toEqual({ id: answer.body.task_id, status: 'queued' });
  expect(await streamEnded).toBe(false);
  // Nest re-raises the signal once its shutdown hooks ran: the status a shell shows as 143.
  await exited;
  expect([api.process.child.exitCode, api.process.child.signalCode]).toEqual([null, 'SIGTERM']);
});

it('after SIGTERM readiness answers 503 while other requests are still served, then it exits', async () => {
  // Long enough to outlast a loaded machine's probing; the exit below waits for it to end.
  api = await startApi({ SHUTDOWN_DELAY_MS: '15000' });
  await publishCatalog(api, [catalogEntry()]);
  const key = await apiKeyFor(api, 'alice');
  const ready = () => fetch(`${api!.url}/healthz/ready`);
  expect((await ready()).status).toBe(200);
  const exited = api.process.kill('SIGTERM');
  // Without the delay the port closes at once: the probe fails to connect and this times out.
  const notReady = await waitUntil(async () => {
    const res = await ready();
    return res.status === 200 ? undefined : res;
  }, 'readiness to answer 503 after SIGTERM');
  // The database is up all along: this 503 is the drain's.
  expect(notReady.status).toBe(503);
  const toolsets = await request(api.url).get('/v1/toolsets').set('Authorization', bearer(key));
  expect(toolsets.status).toBe(200);
  expect(toolsets.body.items.map((t: { name: string }) => t.name)).toEqual(['report']);
  expect((await fetch(`${api.url}/healthz/live`)).status).toBe(200);
  await exited;
  expect([api.process.child.exitCode, api.process.child.signalCode]).toEqual([null, 'SIGTERM']);
});
