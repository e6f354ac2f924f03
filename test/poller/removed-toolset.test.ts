// Guards against a catalog that lies: a toolset no live poller has configured turns unavailable, new submits to it get 422, and its queued tasks end toolset_removed after the grace (outcome_uncertain for a submit that may have been sent).
import request from 'supertest';
import { ApiKeyRepository } from '@app/persistence';
import { ApiProcess, bearer } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const HEARTBEAT_INTERVAL_MS = 300;
const GRACE_MS = 2000;

const fleet = useFleet({ perTest: true });
let api: ApiProcess;
let auth: string;

beforeAll(async () => {
  api = await fleet.api();
  auth = bearer((await new ApiKeyRepository(fleet.db).create('user-1', 'test')).key);
});

interface ShownToolset {
  name: string;
  available: boolean;
  unavailable_reason: string | null;
}

async function shown(): Promise<Map<string, ShownToolset>> {
  const res = await request(api.url).get('/v1/toolsets').set('Authorization', auth).expect(200);
  return new Map((res.body.items as ShownToolset[]).map((t) => [t.name, t]));
}

const submit = (toolset: string) =>
  request(api.url)
    .post('/v1/threads/thread-1/tasks')
    .set('Authorization', auth)
    .send({ toolset, arguments: { duration_ms: 100 } });

it('two pollers with different configs: the toolset only the stopped one had becomes unavailable', async () => {
  const demo = await startDemoServer();
  const both = writeServersFile({
    shared: demoServerEntry(demo.url, 'shared'),
    extra: demoServerEntry(demo.url, 'only-a'),
  });
  const sharedOnly = writeServersFile({ shared: demoServerEntry(demo.url, 'shared') });
  const env = {
    HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_INTERVAL_MS),
    REMOVED_TOOLSET_GRACE_MS: String(GRACE_MS),
  };
  const [a] = await Promise.all([fleet.poller(both, { env }), fleet.poller(sharedOnly, { env })]);
  await waitUntil(async () => {
    const catalog = await shown();
    return catalog.get('shared')?.available && catalog.get('only-a')?.available ? true : undefined;
  }, 'both toolsets available');
  await submit('only-a').expect(201);

  await a.terminate();
  const gone = await waitUntil(async () => {
    const toolset = (await shown()).get('only-a');
    return toolset && !toolset.available ? toolset : undefined;
  }, 'only-a to become unavailable');
  expect(gone.unavailable_reason).toBe(
    'no longer configured on any running gateway worker (removed from the configuration)',
  );
  expect((await shown()).get('shared')?.available).toBe(true);

  // New submits: 422 for the removed toolset, as for one never configured.
  const refused = await submit('only-a').expect(422);
  expect(refused.body.errors).toEqual([
    { path: '/toolset', message: 'is no longer configured on the gateway (see GET /v1/toolsets)' },
  ]);
  await submit('never-configured').expect(422);
  await submit('shared').expect(201);

  // A task queued for it (accepted before the removal was seen) ends after the grace. So does
  // one whose submit was recorded as started by a worker that stopped before storing a handle:
  // the upstream may have it, so it is no "removed before the task could be submitted".
  const [queued, maybeSent] = await insertFleetTasks(fleet.db, [
    { toolset: 'only-a', server: 'extra', input: { duration_ms: 100 } },
    { toolset: 'only-a', server: 'extra', input: { duration_ms: 100 } },
  ]);
  await fleet.db.query(
    `UPDATE tasks SET submit_started_at = now(), submit_attempts = 1 WHERE id = $1`,
    [maybeSent],
  );
  const [ended] = await waitUntil(
    async () => {
      const rows = await fleet.db.query<{
        status: string;
        error_code: string | null;
        waited_ms: number;
      }>(
        `SELECT t.status, t.error_code,
                extract(epoch FROM t.completed_at - s.removed_at) * 1000 AS waited_ms
           FROM tasks t JOIN toolsets s ON s.name = t.toolset
          WHERE t.id = $1 AND t.completed_at IS NOT NULL`,
        [queued],
      );
      return rows.length > 0 ? rows : undefined;
    },
    'the queued task to end',
    GRACE_MS + 15_000,
  );
  expect([ended.status, ended.error_code]).toEqual(['failed', 'toolset_removed']);
  expect(Number(ended.waited_ms)).toBeGreaterThanOrEqual(GRACE_MS);
  const task = await request(api.url)
    .get(`/v1/threads/thread-1/tasks/${queued}`)
    .set('Authorization', auth)
    .expect(200);
  expect(task.body.error).toEqual({
    code: 'toolset_removed',
    message:
      "The task's toolset was removed from the gateway's configuration before the task could be submitted.",
  });

  const uncertain = await waitUntil(
    async () => {
      const res = await request(api.url)
        .get(`/v1/threads/thread-1/tasks/${maybeSent}`)
        .set('Authorization', auth)
        .expect(200);
      return res.body.status === 'failed' ? res.body : undefined;
    },
    'the maybe-sent task to end',
    15_000,
  );
  expect(uncertain.error.code).toBe('outcome_uncertain');

  // Configured again: a poller that lists it brings it back.
  await fleet.poller(both, { env });
  await waitUntil(
    async () => ((await shown()).get('only-a')?.available ? true : undefined),
    'only-a to be available again',
  );
  await submit('only-a').expect(201);
});
