// Guards against an event stream outliving its authorization (a revoked API key, an expired JWT), living forever, or one user opening unlimited streams.
import request from 'supertest';
import { ApiKeyRepository } from '@app/persistence';
import { insertTasks } from '../helpers/tasks';
import { waitUntil } from '../helpers/wait';
import { ApiProcess, signJwt } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { SseClient } from '../helpers/sse';

const RECHECK_MS = 300;
// Over twice the revoke test's bound below, so a stalled API cannot end that stream by age first.
const MAX_AGE_MS = 8000;

const fleet = useFleet();
let api: ApiProcess;
const clients: SseClient[] = [];

beforeAll(async () => {
  api = await fleet.api({
    SSE_RECHECK_INTERVAL_MS: String(RECHECK_MS),
    SSE_MAX_AGE_MS: String(MAX_AGE_MS),
    SSE_MAX_STREAMS_PER_USER: '2',
  });
});
afterAll(() => {
  for (const client of clients) client.close();
});

/** Opens a stream and records when the server ends it. */
async function open(
  token: string,
  thread: string,
  last?: string,
): Promise<{ client: SseClient; ended: () => number | undefined }> {
  const client = await SseClient.open(`${api.url}/v1/threads/${thread}/events`, token, last);
  clients.push(client);
  expect(client.res.statusCode).toBe(200);
  let endedAt: number | undefined;
  client.res.on('end', () => (endedAt = Date.now()));
  return { client, ended: () => endedAt };
}

it('ends a stream soon after its API key is revoked', async () => {
  const keys = new ApiKeyRepository(fleet.db);
  const made = await keys.create('kim', 'ci');
  const { client, ended } = await open(made.key, 'rev');
  await insertTasks(fleet.db, 1, { userId: 'kim', threadId: 'rev' });
  // Still authorized: it keeps going past several re-checks.
  await waitUntil(() => (client.comments.includes('connected') ? true : undefined), 'connected');
  const revokedAt = Date.now();
  await keys.revoke(made.info.id);
  await waitUntil(ended, 'the stream to end after the revoke', 10_000);
  // Two re-checks, and room for a slow host.
  expect(ended()! - revokedAt).toBeLessThan(RECHECK_MS * 2 + 3000);
  expect(client.comments).toContain('authorization ended');
});

it('ends a stream once its JWT expires', async () => {
  // `exp` a second ago (in whole seconds): inside the 5 s clock tolerance for three to four more
  // seconds, time enough to open the stream on a slow host.
  const token = signJwt('jay', { exp: Math.floor(Date.now() / 1000) - 1 });
  const { client, ended } = await open(token, 'exp');
  await waitUntil(ended, 'the stream to end after the expiry', 10_000);
  expect(client.comments).toContain('authorization ended');
});

it('ends a stream at its maximum age; the client resumes with Last-Event-ID', async () => {
  const token = signJwt('max', { exp: Math.floor(Date.now() / 1000) + 600 });
  const ids = await insertTasks(fleet.db, 1, { userId: 'max', threadId: 'age' });
  await fleet.db.query(`UPDATE tasks SET status = 'working' WHERE id = $1`, [ids[0]]);
  const started = Date.now();
  const first = await open(token, 'age');
  await waitUntil(() => (first.client.events.length >= 1 ? true : undefined), 'the first event');
  await waitUntil(first.ended, 'the stream to reach its maximum age', MAX_AGE_MS + 10_000);
  expect(first.ended()! - started).toBeGreaterThanOrEqual(MAX_AGE_MS - 500);
  expect(first.client.comments).toContain('max age reached; reconnect');

  const second = await open(token, 'age', first.client.lastId);
  await fleet.db.query(
    `UPDATE tasks SET status = 'completed', completed_at = now()
      WHERE id = $1`,
    [ids[0]],
  );
  await waitUntil(() => (second.client.events.length >= 1 ? true : undefined), 'the next event');
  expect(second.client.events.map((e) => e.event)).toEqual(['task.completed']);
});

it('caps concurrent streams per user with a 429 problem', async () => {
  const token = signJwt('cap', { exp: Math.floor(Date.now() / 1000) + 600 });
  const a = await open(token, 'one');
  await open(token, 'two');
  const refused = await request(api.url)
    .get('/v1/threads/three/events')
    .set('Authorization', `Bearer ${token}`)
    .expect(429);
  expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(refused.body.detail).toMatch(/At most 2 event streams per user/);
  expect(refused.headers['retry-after']).toBeDefined();
  // The front door's status stream (`GET /mcp`, 2025-11-25) takes a slot of the same user's.
  const refusedMcp = await request(api.url)
    .get('/mcp')
    .set('Authorization', `Bearer ${token}`)
    .set('Accept', 'text/event-stream')
    .expect(429);
  expect(JSON.stringify(refusedMcp.body)).toMatch(/At most 2 event streams per user/);
  // Another user is not affected.
  await open(signJwt('other', { exp: Math.floor(Date.now() / 1000) + 600 }), 'one');
  // A closed stream frees its slot.
  a.client.close();
  const again = await waitUntil(async () => {
    const probe = await SseClient.open(`${api.url}/v1/threads/four/events`, token);
    clients.push(probe);
    if (probe.res.statusCode === 200) return probe;
    probe.close();
    return undefined;
  }, 'a slot to free up');
  expect(again.res.statusCode).toBe(200);
});
