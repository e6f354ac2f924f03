// Guards against the keys CLI printing the key anywhere but once, storing it in clear, or a
// revoked key still opening the API.
import request from 'supertest';
import { startNode } from '../helpers/node-process';
import { bearer, useApi } from '../helpers/api';
import { waitUntil } from '../helpers/wait';

const api = useApi({ catalog: [] });

async function cli(
  ...args: string[]
): Promise<{ code: number | null; out: string[]; err: string[] }> {
  const child = startNode('apps/cli/main.js', ['keys', ...args], {
    DATABASE_URL: api.db.url,
    LOG_LEVEL: 'silent',
  });
  const code = await child.exited;
  return { code, out: child.lines, err: child.stderr };
}

it('creates a key printed alone on the last line, lists it without the key, and revokes it', async () => {
  // Each run is a process start; the two refusals touch no key of erin's, so they run alongside.
  const [created, again, bad] = await Promise.all([
    cli('create', '--user', 'erin', '--name', 'ci'),
    cli('revoke', 'key_nosuchkey'),
    cli('create', '--user', 'erin'),
  ]);
  expect(created.code).toBe(0);
  const key = created.out[created.out.length - 1];
  expect(key).toMatch(/^mtg_[A-Za-z0-9_-]{43}$/);
  expect(created.out.filter((line) => line.includes(key))).toEqual([key]);

  const [stored] = await api.db.db.query(`SELECT * FROM api_keys WHERE user_id = 'erin'`);
  expect(JSON.stringify(stored)).not.toContain(key.slice(4));
  expect(stored.key_hash).toMatch(/^[0-9a-f]{64}$/);

  const me = await request(api.url).get('/v1/tasks').set('Authorization', bearer(key)).expect(200);
  expect(me.body.items).toEqual([]);

  const listed = await cli('list', '--user', 'erin');
  expect(listed.code).toBe(0);
  expect(listed.out.join('\n')).toContain(stored.id);
  expect(listed.out.join('\n')).not.toContain(key);

  const revoked = await cli('revoke', stored.id as string);
  expect(revoked.code).toBe(0);
  // The API remembers the key until the revoke's notification reaches it (docs/api.md, "API key
  // cache"): that can trail the CLI's exit by a moment, well under the cache's 10 s.
  await waitUntil(
    async () => {
      const res = await request(api.url).get('/v1/tasks').set('Authorization', bearer(key));
      return res.status === 401 ? true : undefined;
    },
    'the revoked key refused',
    5_000,
  );

  expect(again.code).toBe(1);
  expect(bad.code).toBe(64);
});
