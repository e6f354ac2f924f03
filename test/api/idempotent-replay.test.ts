// Guards against an idempotent retry being judged by today's catalog before its key is looked up:
// once the toolset's schema changed or the toolset was removed, the retry of an accepted submit
// got a 422 instead of its task, on the submit fast path and on the Nest route alike.
import request from 'supertest';
import { apiKeyFor, bearer, catalogEntry, publishCatalog, useApi } from '../helpers/api';

const api = useApi({ catalog: [] });
let token: string;

beforeAll(async () => {
  token = bearer(await apiKeyFor(api, 'retrier'));
});

const schema = (type: 'integer' | 'string') => ({
  type: 'object',
  properties: { n: { type } },
  required: ['n'],
  additionalProperties: false,
});

// The fast path takes the exact path; a trailing slash goes to Express and the Nest route.
describe.each([
  ['the fast path', ''],
  ['the Nest route', '/'],
])('%s', (_route, slash) => {
  const toolset = `replay${slash ? '-nest' : '-fast'}`;
  const submit = (key: string, args: unknown) =>
    request(api.url)
      .post(`/v1/threads/t-${toolset}/tasks${slash}`)
      .set('Authorization', token)
      .set('Idempotency-Key', key)
      .send({ toolset, arguments: args });

  it('answers the earlier task after the schema changed, then after the toolset was removed', async () => {
    await publishCatalog(api, [catalogEntry({ name: toolset, inputSchema: schema('integer') })]);
    const first = await submit(`${toolset}-k1`, { n: 1 });
    expect(first.status).toBe(201);

    await publishCatalog(api, [catalogEntry({ name: toolset, inputSchema: schema('string') })]);
    // A new submit is judged by the new schema...
    expect((await submit(`${toolset}-k2`, { n: 1 })).status).toBe(422);
    // ...but the retry of the accepted one is a replay.
    const changed = await submit(`${toolset}-k1`, { n: 1 });
    expect(changed.status).toBe(200);
    expect(changed.body.task_id).toBe(first.body.task_id);

    await api.db.db.query(`UPDATE toolsets SET removed_at = now() WHERE name = $1`, [toolset]);
    const removed = await submit(`${toolset}-k1`, { n: 1 });
    expect(removed.status).toBe(200);
    expect(removed.body.task_id).toBe(first.body.task_id);
    // Another body under the same key is still the key's conflict, not a new task.
    const other = await submit(`${toolset}-k1`, { n: 2 });
    expect(other.status).toBe(422);
    expect(other.body.errors).toEqual([
      { path: 'Idempotency-Key', message: 'was already used with a different body or thread' },
    ]);
    // Without a key the refusal stands.
    const fresh = await submit(`${toolset}-k3`, { n: 1 });
    expect(fresh.status).toBe(422);
    expect(fresh.body.errors[0].path).toBe('/toolset');
  });
});
