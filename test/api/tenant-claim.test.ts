// Guards docs/leases.md, "Fair share": the JWT claim named by AUTH_TENANT_CLAIM is stored as the
// task's tenant (the fair-share principal); without it, or for an API key, the user is its own.
import request from 'supertest';
import { apiKeyFor, bearer, catalogEntry, signJwt, useApi } from '../helpers/api';

const api = useApi({ env: { AUTH_TENANT_CLAIM: 'org_id' } });

async function submit(token: string): Promise<string> {
  const res = await request(api.url)
    .post('/v1/threads/t1/tasks')
    .set('Authorization', bearer(token))
    .send({ toolset: catalogEntry().name, arguments: { title: 'q' } })
    .expect(201);
  return (res.body as { task_id: string }).task_id;
}

async function tenantOf(taskId: string): Promise<string | null> {
  const rows = await api.db.db.query<{ tenant: string | null }>(
    `SELECT tenant FROM tasks WHERE id = $1`,
    [taskId],
  );
  return rows[0].tenant;
}

it('stores the tenant claim on the task; a token without it, or an API key, stores none', async () => {
  expect(await tenantOf(await submit(signJwt('alice', { org_id: 'acme' })))).toBe('acme');
  expect(await tenantOf(await submit(signJwt('bob')))).toBeNull();
  // Not a string: no tenant, never a 500.
  expect(await tenantOf(await submit(signJwt('carol', { org_id: 42 })))).toBeNull();
  expect(await tenantOf(await submit(await apiKeyFor(api, 'dave')))).toBeNull();
});
