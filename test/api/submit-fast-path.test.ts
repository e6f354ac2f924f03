// Guards against the submit fast path answering a request otherwise than the Nest route does:
// status, headers, body, problem answers, access lines, request IDs in log lines and metrics.
import etag from 'etag';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { ApiKeyRepository, QuotaRepository } from '@app/persistence';
import { ApiProcess, catalogEntry, publishCatalog, signJwt } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { parseExposition } from '../metrics/exposition';
import { waitUntil } from '../helpers/wait';

interface Answer {
  status: number;
  /** Raw header lines in order, `date` left out (it is the clock's). */
  headers: [string, string][];
  body: string;
}

/** Two APIs on one database: the fast path in front (the default), and the Nest route alone. */
interface Pair {
  fast: ApiProcess;
  nest: ApiProcess;
}

const fleet = useFleet();
let pair: Pair;

/** Each API's own users, so idempotency keys and quotas of one never touch the other's. */
const keys: Record<'fast' | 'nest', Record<string, string>> = { fast: {}, nest: {} };

beforeAll(async () => {
  const fast = await fleet.api();
  await publishCatalog({ db: fleet.database }, [
    catalogEntry(),
    // ajv cannot compile it: the validator's warning is logged inside the request.
    catalogEntry({
      name: 'loose',
      inputSchema: { type: 'object', properties: { x: { type: 'nope' } } },
    }),
  ]);
  pair = { fast, nest: await fleet.api({ API_SUBMIT_FAST_PATH: 'false' }) };
  const repo = new ApiKeyRepository(fleet.db);
  for (const side of ['fast', 'nest'] as const) {
    for (const user of ['alice', 'limited']) {
      keys[side][user] = (await repo.create(`${user}-${side}`, 'test')).key;
    }
    await new QuotaRepository(fleet.db).set(`limited-${side}`, { submitsPerMinute: 1 });
  }
});

/** One request, sent raw so that headers and body bytes are exactly as written. */
interface Case {
  name: string;
  path?: string;
  /** `alice` (default), `limited`, `jwt`, `expired`, `bad-key`, or undefined for none. */
  auth?: string | null;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Sent with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  status: number;
}

const submit = JSON.stringify({ toolset: 'report', arguments: { title: 't' } });
const json = { 'content-type': 'application/json' };

const CASES: Case[] = [
  { name: 'a submit', headers: json, body: submit, status: 201 },
  {
    name: 'a query string (the route takes no parameters)',
    path: '/v1/threads/t1/tasks?x=1',
    headers: json,
    body: submit,
    status: 400,
  },
  {
    name: 'a first idempotent submit',
    headers: { ...json, 'idempotency-key': 'k1' },
    body: submit,
    status: 201,
  },
  { name: 'its retry', headers: { ...json, 'idempotency-key': 'k1' }, body: submit, status: 200 },
  {
    name: 'the key with another body',
    headers: { ...json, 'idempotency-key': 'k1' },
    body: JSON.stringify({ toolset: 'report', arguments: { title: 'other' } }),
    status: 422,
  },
  {
    name: 'a bad Idempotency-Key',
    headers: { ...json, 'idempotency-key': 'k'.repeat(256) },
    body: submit,
    status: 400,
  },
  { name: 'Prefer: wait=0', headers: { ...json, prefer: 'wait=0' }, body: submit, status: 201 },
  {
    name: 'a malformed preference',
    headers: { ...json, prefer: 'wait=soon' },
    body: submit,
    status: 201,
  },
  {
    name: 'a traceparent',
    headers: { ...json, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    body: submit,
    status: 201,
  },
  {
    name: 'metadata',
    headers: json,
    body: JSON.stringify({ toolset: 'report', arguments: { title: 't' }, metadata: { a: [1] } }),
    status: 201,
  },
  { name: 'a JWT', auth: 'jwt', headers: json, body: submit, status: 201 },
  { name: 'an expired JWT', auth: 'expired', headers: json, body: submit, status: 401 },
  { name: 'an unknown API key', auth: 'bad-key', headers: json, body: submit, status: 401 },
  { name: 'no token', auth: null, headers: json, body: submit, status: 401 },
  {
    name: 'no token and no JSON',
    auth: null,
    headers: { 'content-type': 'text/plain' },
    body: 'x',
    status: 401,
  },
  { name: 'malformed JSON', headers: json, body: '{"toolset": ', status: 400 },
  {
    name: 'a body over 1 MiB',
    headers: json,
    body: JSON.stringify({ toolset: 'report', arguments: { title: 'x'.repeat(1024 * 1024) } }),
    status: 413,
  },
  { name: 'a text body', headers: { 'content-type': 'text/plain' }, body: 'hello', status: 415 },
  {
    name: 'an unsupported charset',
    headers: { 'content-type': 'application/json; charset=latin1' },
    body: submit,
    status: 415,
  },
  {
    name: 'a +json type',
    headers: { 'content-type': 'application/vnd.gateway+json' },
    body: submit,
    status: 201,
  },
  { name: 'a chunked body', headers: json, body: submit, chunked: true, status: 201 },
  {
    name: 'a gzip body',
    headers: { ...json, 'content-encoding': 'gzip' },
    body: gzipSync(submit),
    status: 201,
  },
  {
    name: 'a UTF-8 BOM',
    headers: json,
    body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(submit)]),
    status: 201,
  },
  { name: 'no body', status: 422 },
  { name: 'an empty JSON body', headers: json, body: '', status: 422 },
  { name: 'an array', headers: json, body: '[1]', status: 422 },
  { name: 'a string', headers: json, body: '"text"', status: 422 },
  {
    name: 'an unknown field',
    headers: json,
    body: JSON.stringify({ toolset: 'report', arguments: {}, extra: 1 }),
    status: 422,
  },
  {
    name: 'an unknown toolset',
    headers: json,
    body: JSON.stringify({ toolset: 'nope', arguments: {} }),
    status: 422,
  },
  {
    name: 'arguments off the schema',
    headers: json,
    body: JSON.stringify({ toolset: 'report', arguments: { pages: 0 } }),
    status: 422,
  },
  {
    name: 'a NUL in metadata',
    headers: json,
    body: JSON.stringify({
      toolset: 'report',
      arguments: { title: 't' },
      metadata: { n: 'a\u0000b' },
    }),
    status: 422,
  },
  {
    name: 'JSON nested too deep',
    headers: json,
    body: `{"toolset":"report","arguments":${'{"k":'.repeat(100)}1${'}'.repeat(100)}}`,
    status: 422,
  },
  {
    name: 'a schema ajv cannot compile',
    headers: json,
    body: JSON.stringify({ toolset: 'loose', arguments: { x: 1 } }),
    status: 201,
  },
  {
    name: 'a bad thread ID',
    path: '/v1/threads/bad%20id/tasks',
    headers: json,
    body: submit,
    status: 400,
  },
  {
    name: 'a thread ID too long',
    path: `/v1/threads/${'a'.repeat(129)}/tasks`,
    headers: json,
    body: submit,
    status: 400,
  },
  {
    name: 'a bad thread ID without a token',
    path: '/v1/threads/bad%20id/tasks',
    auth: null,
    headers: json,
    body: submit,
    status: 401,
  },
  {
    name: 'a trailing slash',
    path: '/v1/threads/t1/tasks/',
    headers: json,
    body: submit,
    status: 201,
  },
  { name: 'upper case', path: '/V1/threads/t1/tasks', headers: json, body: submit, status: 201 },
  { name: 'a first limited submit', auth: 'limited', headers: json, body: submit, status: 201 },
  { name: 'the second, over its quota', auth: 'limited', headers: json, body: submit, status: 429 },
];

function authorization(side: 'fast' | 'nest', auth: string | null | undefined): string | undefined {
  if (auth === null) return undefined;
  const now = Math.floor(Date.now() / 1000);
  if (auth === 'jwt') return `Bearer ${signJwt(`jwt-${side}`)}`;
  if (auth === 'expired') return `Bearer ${signJwt(`jwt-${side}`, { exp: now - 60 })}`;
  if (auth === 'bad-key') return 'Bearer mtg_nosuchkeyatall';
  return `Bearer ${keys[side][auth ?? 'alice']}`;
}

function send(url: string, c: Case, side: 'fast' | 'nest'): Promise<Answer> {
  const { hostname, port } = new URL(url);
  const headers: Record<string, string | number> = { ...c.headers };
  const auth = authorization(side, c.auth);
  if (auth) headers.authorization = auth;
  if (c.body !== undefined && !c.chunked) headers['content-length'] = Buffer.byteLength(c.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: hostname,
        port,
        method: 'POST',
        path: c.path ?? '/v1/threads/t1/tasks',
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = res.rawHeaders;
          const pairs: [string, string][] = [];
          for (let i = 0; i < raw.length; i += 2) {
            if (raw[i].toLowerCase() !== 'date') pairs.push([raw[i].toLowerCase(), raw[i + 1]]);
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: pairs,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (c.chunked && c.body !== undefined) req.write(c.body);
    req.end(c.chunked ? undefined : c.body);
  });
}

const TASK_ID = /task_[a-z2-7]{26}/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g;

/** The answer with what must differ between two submits (IDs, instants, delays) replaced. */
function normalized(answer: Answer): unknown {
  const body = answer.body
    .replace(TASK_ID, 'TASK')
    .replace(TIME, 'TIME')
    .replace(/"retry_after_seconds":\d+/, '"retry_after_seconds":0');
  return {
    status: answer.status,
    headers: answer.headers.map(([name, value]) => {
      if (name === 'x-request-id') return [name, 'ID'];
      if (name === 'etag') return [name, 'ETAG'];
      if (name === 'retry-after') return [name, 'N'];
      return [name, value.replace(TASK_ID, 'TASK')];
    }),
    body: body.startsWith('{') ? JSON.parse(body) : body,
  };
}

/** The access lines of one API's submits (health and start-up lines left out). */
function accessLines(lines: string[]): Record<string, unknown>[] {
  return lines
    .filter((line) => line.startsWith('{') && line.includes('"req":'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => /^request (completed|errored)$/.test(String(line.msg)));
}

/** POST request counts by route and status, from the duration histogram. */
async function postCounts(metricsUrl: string): Promise<Record<string, number>> {
  const exposition = parseExposition(await (await fetch(`${metricsUrl}/metrics`)).text());
  const counts: Record<string, number> = {};
  for (const s of exposition.samples) {
    if (s.name === 'mcp_tasks_http_request_duration_seconds_count' && s.labels.method === 'POST') {
      counts[`${s.labels.route} ${s.labels.status}`] = s.value;
    }
    if (s.name === 'mcp_tasks_submitted_total' || s.name === 'mcp_tasks_submit_refusals_total') {
      counts[`${s.name} ${JSON.stringify(s.labels)}`] = s.value;
    }
  }
  return counts;
}

describe('the submit fast path against the Nest route', () => {
  const answers: Record<'fast' | 'nest', Answer[]> = { fast: [], nest: [] };

  beforeAll(async () => {
    for (const c of CASES) {
      answers.fast.push(await send(pair.fast.url, c, 'fast'));
      answers.nest.push(await send(pair.nest.url, c, 'nest'));
    }
  });

  it.each(CASES.map((c, i) => [c.name, i] as const))('answers %s alike', (_name, i) => {
    const [fast, nest] = [answers.fast[i], answers.nest[i]];
    expect(fast.status).toBe(CASES[i].status);
    expect(normalized(fast)).toEqual(normalized(nest));
    // The ETag is the weak tag of the body sent, as Express computes it.
    for (const answer of [fast, nest]) {
      const tag = answer.headers.find(([name]) => name === 'etag')?.[1];
      expect(tag).toBe(etag(Buffer.from(answer.body, 'utf8'), { weak: true }));
    }
  });

  it('writes the same access lines, each with the ID the answer carries', async () => {
    const idsOf = (side: 'fast' | 'nest') =>
      answers[side].flatMap((a) =>
        a.headers.filter(([n]) => n === 'x-request-id').map(([, v]) => v),
      );
    // An access line is written when its answer has been sent: wait for every answer's.
    const lines = await waitUntil(() => {
      const fast = accessLines(pair.fast.process.lines);
      const nest = accessLines(pair.nest.process.lines);
      const done = fast.length === idsOf('fast').length && nest.length === idsOf('nest').length;
      return done ? { fast, nest } : undefined;
    }, 'both APIs to log every request that got a request ID');
    const shape = (line: Record<string, unknown>) => {
      const { time: _time, pid: _pid, responseTime, req, ...rest } = line;
      return { ...rest, req: { ...(req as object), id: 'ID' }, responseTime: typeof responseTime };
    };
    expect(lines.fast.map(shape)).toEqual(lines.nest.map(shape));
    for (const side of ['fast', 'nest'] as const) {
      expect(lines[side].map((line) => (line.req as { id: string }).id)).toEqual(idsOf(side));
    }
  });

  it('binds the request ID to lines logged while it is served', async () => {
    const i = CASES.findIndex((c) => c.name === 'a schema ajv cannot compile');
    for (const [side, process] of [
      ['fast', pair.fast.process],
      ['nest', pair.nest.process],
    ] as const) {
      const id = answers[side][i].headers.find(([n]) => n === 'x-request-id')?.[1];
      const line = await process.waitForLine(/an input schema does not compile/);
      expect(JSON.parse(line)).toMatchObject({
        level: 'warn',
        context: 'ArgumentsValidator',
        req: { id },
      });
    }
  });

  it('counts the same requests, routes, statuses, submits and refusals', async () => {
    const fast = await postCounts(pair.fast.metricsUrl);
    const nest = await postCounts(pair.nest.metricsUrl);
    expect(fast).toEqual(nest);
    // Refused before the body was read: no route yet, as Express has it.
    expect(fast['unmatched 401']).toBeGreaterThan(0);
    expect(fast['/v1/threads/:thread_id/tasks 201']).toBeGreaterThan(0);
  });
});
