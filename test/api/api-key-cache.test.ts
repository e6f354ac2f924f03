// Guards against the API key cache (docs/api.md, "API key cache") letting a revoked key in: a
// revoke through the repository (as the CLI does) must reach a replica that remembers the key,
// two replicas alike, and a revoke written by hand must stop working within API_KEY_CACHE_MS.
import request from 'supertest';
import { ApiKeyRepository } from '@app/persistence';
import { ApiProcess, bearer } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { waitUntil } from '../helpers/wait';

/** Long enough that only the notification can explain a prompt 401. */
const LONG_CACHE_MS = 60_000;
const SHORT_CACHE_MS = 1_500;

const fleet = useFleet();
let replicas: ApiProcess[] = [];
let shortCache: ApiProcess;

beforeAll(async () => {
  replicas = [
    await fleet.api({ API_KEY_CACHE_MS: String(LONG_CACHE_MS) }),
    await fleet.api({ API_KEY_CACHE_MS: String(LONG_CACHE_MS) }),
  ];
  shortCache = await fleet.api({ API_KEY_CACHE_MS: String(SHORT_CACHE_MS) });
  // The cache serves nothing until its replica listens for revokes: wait for all three.
  await waitUntil(async () => {
    const rows = await fleet.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE application_name = 'mcp-task-gateway-api-listen'
          AND query LIKE 'LISTEN %mcp_api_key_revoked%'`,
    );
    return Number(rows[0].n) >= 3 ? true : undefined;
  }, 'three API key listeners');
});

const status = async (api: ApiProcess, key: string): Promise<number> =>
  (await request(api.url).get('/v1/tasks').set('Authorization', bearer(key))).status;

it('serves a remembered key until its revoke is heard, then refuses it on every replica', async () => {
  const keys = new ApiKeyRepository(fleet.db);
  const { info, key } = await keys.create('carol', 'ci');
  for (const api of replicas) expect(await status(api, key)).toBe(200);

  // Revoked by hand, without the notification: the replicas still remember the key (the cache
  // is in use, so the prompt 401 below is the notification's doing, not a database read).
  await fleet.db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [info.id]);
  for (const api of replicas) expect(await status(api, key)).toBe(200);

  expect(await keys.revoke(info.id)).toBe(true);
  for (const api of replicas) {
    await waitUntil(
      async () => ((await status(api, key)) === 401 ? true : undefined),
      'the revoked key refused',
      LONG_CACHE_MS / 4,
    );
  }
});

it('refuses a key revoked by hand once API_KEY_CACHE_MS has passed', async () => {
  const keys = new ApiKeyRepository(fleet.db);
  const { info, key } = await keys.create('dave', 'ci');
  expect(await status(shortCache, key)).toBe(200);
  await fleet.db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [info.id]);
  await waitUntil(
    async () => ((await status(shortCache, key)) === 401 ? true : undefined),
    'the key revoked by hand refused',
  );
  // And it stays refused: a revoked key is never remembered.
  expect(await status(shortCache, key)).toBe(401);
});
