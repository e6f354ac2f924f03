// Guards against the JWKS path (RS256/ES256) accepting a forged, expired, misaddressed or alg-confused token, or losing the `sub` as the task's owner.
import { createHmac, generateKeyPairSync, JsonWebKey, KeyObject, sign } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import {
  ApiProcess,
  AUDIENCE,
  bearer,
  catalogEntry,
  ISSUER,
  publishCatalog,
  signJwt,
} from '../helpers/api';
import { useFleet } from '../helpers/fleet';

type Alg = 'RS256' | 'ES256';

interface SigningKey {
  kid: string;
  alg: Alg;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function rsaKey(kid: string): SigningKey {
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, alg: 'RS256', ...pair };
}

function ecKey(kid: string): SigningKey {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg: 'ES256', ...pair };
}

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Default claims of a valid token for `sub`; `claims` override them (undefined removes one). */
function claimsFor(sub: string, claims: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { iss: ISSUER, aud: AUDIENCE, sub, iat: now, exp: now + 300, ...claims };
}

/** A compact JWS built by hand: RS256 is PKCS#1 v1.5, ES256 is the raw r||s (IEEE P1363). */
function signJws(key: SigningKey, payload: Record<string, unknown>, kid = key.kid): string {
  const input = `${part({ alg: key.alg, typ: 'JWT', kid })}.${part(payload)}`;
  const signature =
    key.alg === 'RS256'
      ? sign('sha256', Buffer.from(input), key.privateKey)
      : sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const rs = rsaKey('rs-1');
const es = ecKey('es-1');
let jwks: Server;
let jwksHits = 0;
// The API needs the JWKS server's port, known only in beforeAll: started there, on the fleet.
const fleet = useFleet();
let api: ApiProcess;

beforeAll(async () => {
  const keys: JsonWebKey[] = [rs, es].map((k) => ({
    ...k.publicKey.export({ format: 'jwk' }),
    kid: k.kid,
    alg: k.alg,
    use: 'sig',
  }));
  jwks = createServer((req, res) => {
    jwksHits++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
  const { port } = jwks.address() as AddressInfo;
  api = await fleet.api({
    AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    // The harness configures a shared secret by default; only the JWKS may be configured here.
    AUTH_JWT_SECRET: '',
  });
  await publishCatalog({ db: fleet.database }, [catalogEntry()]);
});

// After the fleet's own afterAll has stopped the API.
afterAll(async () => {
  jwks?.closeAllConnections();
  await new Promise<void>((resolve) => (jwks ? jwks.close(() => resolve()) : resolve()));
});

async function submit(token: string, thread: string): Promise<request.Response> {
  return request(api.url)
    .post(`/v1/threads/${thread}/tasks`)
    .set('Authorization', bearer(token))
    .send({ toolset: 'report', arguments: { title: 'quarterly' } });
}

describe.each([
  ['RS256', rs, 'alice-rs'],
  ['ES256', es, 'alice-es'],
] as const)('a valid %s token', (_alg, key, user) => {
  it('is accepted, and the task it submits belongs to its sub', async () => {
    const token = signJws(key, claimsFor(user));
    const created = await submit(token, `jwks-${user}`);
    expect(created.status).toBe(201);
    const taskId = created.body.task_id as string;
    const [row] = await fleet.db.query<{ user_id: string }>(
      'SELECT user_id FROM tasks WHERE id = $1',
      [taskId],
    );
    expect(row.user_id).toBe(user);

    const mine = await request(api.url).get('/v1/tasks').set('Authorization', bearer(token));
    expect(mine.status).toBe(200);
    expect(mine.body.items.map((t: { task_id: string }) => t.task_id)).toEqual([taskId]);

    // Another valid user of the same issuer does not see it: the owner is the sub, not the key.
    const other = signJws(key, claimsFor(`${user}-other`));
    const theirs = await request(api.url)
      .get(`/v1/threads/jwks-${user}/tasks/${taskId}`)
      .set('Authorization', bearer(other));
    expect(theirs.status).toBe(404);
  });
});

it('fetched the keys from the JWKS URL', () => {
  expect(jwksHits).toBeGreaterThan(0);
});

describe('refuses with one 401 problem', () => {
  const stranger = rsaKey('rs-1'); // same kid as a served key, another key pair
  const unlisted = ecKey('es-unknown');
  const now = Math.floor(Date.now() / 1000);
  const rsPublicPem = rs.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const hs256 = (payload: Record<string, unknown>, secret: string | Buffer): string => {
    const input = `${part({ alg: 'HS256', typ: 'JWT', kid: rs.kid })}.${part(payload)}`;
    return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
  };
  const cases: Array<[string, () => string]> = [
    [
      'a token signed by an unknown key under a known kid',
      () => signJws(stranger, claimsFor('eve')),
    ],
    ['a token signed by a key the JWKS does not list', () => signJws(unlisted, claimsFor('eve'))],
    ['an expired token', () => signJws(rs, claimsFor('alice', { iat: now - 600, exp: now - 60 }))],
    ['a token not yet valid', () => signJws(es, claimsFor('alice', { nbf: now + 600 }))],
    ['a token without exp', () => signJws(rs, claimsFor('alice', { exp: undefined }))],
    ['a wrong issuer', () => signJws(rs, claimsFor('alice', { iss: 'https://evil.test' }))],
    ['a wrong audience', () => signJws(es, claimsFor('alice', { aud: 'another-service' }))],
    ['alg none', () => `${part({ alg: 'none', typ: 'JWT' })}.${part(claimsFor('alice'))}.`],
    ['an HS256 token with the secret other suites configure', () => signJwt('alice')],
    [
      'an HS256 token keyed with the RSA public key (alg confusion)',
      () => hs256(claimsFor('alice'), rsPublicPem),
    ],
    [
      'an RS256 signature relabelled ES256',
      () => {
        const [, payload, signature] = signJws(rs, claimsFor('alice')).split('.');
        return `${part({ alg: 'ES256', typ: 'JWT', kid: rs.kid })}.${payload}.${signature}`;
      },
    ],
  ];

  it.each(cases)('%s', async (_name, make) => {
    const token = make();
    for (const res of [
      await request(api.url).get('/v1/tasks').set('Authorization', bearer(token)),
      await submit(token, 'jwks-refused'),
    ]) {
      expect(res.status).toBe(401);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ status: 401, detail: 'A valid bearer token is required.' });
    }
  });

  it('and none of them created a task', async () => {
    const [{ n }] = await fleet.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE thread_id = 'jwks-refused'`,
    );
    expect(n).toBe(0);
  });
});
