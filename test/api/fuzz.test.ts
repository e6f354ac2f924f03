// Guards against any request shape (random paths, parameters, headers, bodies) causing a 500
// or an answer that is not JSON / problem+json.
import request from 'supertest';
import { apiKeyFor, bearer, signJwt, useApi } from '../helpers/api';

/** mulberry32: a tiny seeded PRNG, so a failure replays with the seed it prints. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = Number(process.env.FUZZ_SEED ?? 20251129);
const ROUNDS = 400;

const api = useApi();
let key: string;

beforeAll(async () => {
  key = await apiKeyFor(api, 'alice');
});

it(`survives ${ROUNDS} random requests without a 500 (seed ${SEED})`, async () => {
  const r = rng(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const str = (n: number, alphabet = 'aZ09._:-/%?&=#~ \u00e9\u{1F600}\\"\'<>{}[]'): string =>
    Array.from({ length: Math.floor(r() * n) }, () => pick([...alphabet])).join('');
  const json = (depth: number): unknown => {
    const kind = depth > 3 ? pick(['s', 'n', 'b', 'z']) : pick(['s', 'n', 'b', 'z', 'a', 'o', 'o']);
    if (kind === 's') return str(20);
    if (kind === 'n') return pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, Math.floor(r() * 1000)]);
    if (kind === 'b') return r() < 0.5;
    if (kind === 'z') return null;
    if (kind === 'a') return Array.from({ length: Math.floor(r() * 4) }, () => json(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = 0; i < Math.floor(r() * 4); i++)
      o[
        pick([
          'toolset',
          'arguments',
          'metadata',
          'title',
          'pages',
          '__proto__',
          'constructor',
          str(8),
        ])
      ] = json(depth + 1);
    return o;
  };
  const thread = () =>
    pick([
      't1',
      't1',
      str(10),
      'a'.repeat(129),
      '%FF',
      '..',
      '%2e%2e',
      encodeURIComponent(str(12)),
    ]);
  const taskId = () =>
    pick(['task_aaaaaaaaaaaaaaaaaaaaaaaaaa', 'task_', str(30), '%00', 'task_' + 'z'.repeat(26)]);
  const query = () =>
    pick([
      '',
      `?limit=${pick(['1', '0', '100', '1e2', 'x', '%FF', ''])}`,
      `?status=${pick(['active', 'queued', 'nope', '', '%00'])}`,
      `?cursor=${pick(['', 'AAAA', encodeURIComponent(str(40)), Buffer.from(str(30)).toString('base64url')])}`,
      `?${str(20)}`,
      '?limit[]=1&status[a]=b',
    ]);
  const paths = () =>
    pick([
      `/v1/threads/${thread()}/tasks${query()}`,
      `/v1/threads/${thread()}/tasks/${taskId()}`,
      `/v1/threads/${thread()}/tasks/${taskId()}/cancel`,
      `/v1/threads/${thread()}`,
      `/v1/tasks${query()}`,
      '/v1/toolsets',
      '/v1/status',
      `/v1/${str(12)}`,
      `/${str(20)}`,
      '/healthz/ready',
      '/openapi.json',
    ]);
  const auth = () =>
    pick([
      bearer(key),
      bearer(key),
      bearer(key),
      bearer(signJwt('alice')),
      undefined,
      'Bearer',
      `Bearer ${str(40)}`,
      'Bearer mtg_' + str(40),
      bearer(signJwt(str(300))),
    ]);

  const failures: string[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const method = pick(['get', 'post', 'post', 'post', 'delete', 'put', 'patch'] as const);
    const path = paths();
    let req = request(api.url)[method](path);
    const a = auth();
    if (a !== undefined) req = req.set('Authorization', a);
    if (r() < 0.3) req = req.set('Idempotency-Key', pick(['k1', str(300), '', ' x', 'ключ']));
    if (r() < 0.3) req = req.set('Prefer', pick(['wait=0', 'wait=x', 'return=minimal', str(20)]));
    let body: string | undefined;
    if (method === 'post' || method === 'put' || method === 'patch') {
      const shape = r();
      body =
        shape < 0.4
          ? JSON.stringify({
              toolset: pick(['report', str(10)]),
              arguments: json(0),
              metadata: pick([undefined, json(1), 'x'.repeat(5000)]),
            })
          : shape < 0.7
            ? (JSON.stringify(json(0)) ?? 'null')
            : shape < 0.8
              ? '{"a":' + str(10)
              : shape < 0.9
                ? '['.repeat(5000) + ']'.repeat(5000)
                : str(200);
      req = req.set(
        'Content-Type',
        pick([
          'application/json',
          'application/json',
          'text/plain',
          'application/merge-patch+json',
          'application/json; charset=latin1',
          'multipart/form-data',
        ]),
      );
    }
    let res;
    try {
      res = await (body !== undefined ? req.send(body) : req);
    } catch (error) {
      // superagent refuses some paths itself (invalid characters): no request was sent.
      if (/Invalid|Request path contains unescaped/.test(String(error))) continue;
      throw error;
    }
    const type = String(res.headers['content-type'] ?? '');
    const ok =
      res.status < 500 &&
      (res.status < 400
        ? /json|html|yaml/.test(type) || res.status === 204
        : /^application\/problem\+json/.test(type)) &&
      !/\bat .+\.js:\d+/.test(res.text);
    if (!ok)
      failures.push(
        `#${i} ${method.toUpperCase()} ${path} -> ${res.status} ${type} ${res.text.slice(0, 200)}`,
      );
  }
  expect(failures).toEqual([]);
});
