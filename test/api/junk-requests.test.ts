// Guards against junk input (NUL, invalid UTF-8, bad percent-encoding, repeated or nested query parameters, arrays for strings, huge or negative numbers, deep JSON) answering a 5xx or anything but a problem+json that names what is wrong, on every route of the OpenAPI document.
import { request as httpRequest } from 'node:http';
import { apiKeyFor, bearer, useApi } from '../helpers/api';

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

interface Operation {
  method: string;
  path: string;
  query: string[];
  hasBody: boolean;
}

const api = useApi();
let key: string;
let operations: Operation[];

beforeAll(async () => {
  key = await apiKeyFor(api, 'alice');
  const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
  };
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        hasBody: method === 'post' || method === 'put' || method === 'patch',
      })),
  );
});

/** A raw request: the path is sent byte for byte (no URL normalisation), the answer read whole
 * unless it is an event stream, whose headers are enough. */
function send(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(api.url);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: bearer(key),
          ...(body !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
            : {}),
          ...headers,
        },
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        if (contentType.startsWith('text/event-stream')) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType, body: '' });
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A concrete path for an OpenAPI path template, with `junk` in one parameter (or none). */
function fill(template: string, junk?: { name: string; value: string }): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (junk?.name === name) return junk.value;
    if (name === 'task_id') return 'task_aaaaaaaaaaaaaaaaaaaaaaaaaa';
    if (name === 'id') return 'wh_aaaaaaaaaaaaaaaaaaaaaaaaaa';
    return 'junk-thread';
  });
}

const PATH_JUNK = [
  '%00',
  'a%00b',
  '%FF%FE',
  '%E0%A4%A',
  '%',
  '%zz',
  '%C0%AF',
  'x'.repeat(5000),
  '..%2F..%2Fetc',
];
const QUERY_JUNK = [
  '%00',
  '%FF',
  '%E0%A4%A',
  '%',
  '1e309',
  '-1',
  '99999999999999999999999',
  'a&{name}=b',
  '{}',
];
const STRING_JUNK: unknown[] = [
  'a\u0000b',
  '\u0000',
  ['a'],
  { a: 1 },
  1e308,
  -1,
  '\ud800',
  'x'.repeat(300),
];

/** JSON text nested `levels` deep (as text: building it as a value would overflow the stack). */
function deep(levels: number): string {
  return `${'{"k":'.repeat(levels)}"leaf"${'}'.repeat(levels)}`;
}

/** A valid body per route that reads one; junk goes into each of its fields in turn. */
function validBody(path: string): Record<string, unknown> | null {
  if (path.endsWith('/tasks')) return { toolset: 'report', arguments: { title: 't' } };
  if (path === '/v1/webhooks') return { url: 'https://93.184.215.14/h', description: 'd' };
  if (path.endsWith('/input')) return { responses: { q: 'a' } };
  return null;
}

/** Bodies (JSON text) that are wrong for a POST route: junk in every field it reads. */
function junkBodies(valid: Record<string, unknown>): string[] {
  const bodies: unknown[] = [];
  for (const field of Object.keys(valid)) {
    for (const junk of STRING_JUNK) bodies.push({ ...valid, [field]: junk });
    const inner = valid[field];
    if (inner !== null && typeof inner === 'object') {
      for (const junk of STRING_JUNK) {
        bodies.push({ ...valid, [field]: { ...inner, [Object.keys(inner)[0]]: junk } });
        bodies.push({ ...valid, [field]: { ...inner, 'k\u0000ey': 'v' } });
      }
    }
  }
  if ('arguments' in valid) {
    for (const junk of STRING_JUNK.slice(0, 2)) {
      bodies.push({ ...valid, metadata: { note: junk } });
      bodies.push({ ...valid, metadata: { [String(junk)]: 1 } });
      bodies.push({ ...valid, metadata: { list: [1, { deeper: junk }] } });
    }
  }
  const texts = bodies.map((body) => JSON.stringify(body));
  const base = JSON.stringify(valid).slice(0, -1);
  for (const field of [...Object.keys(valid), 'metadata'])
    for (const levels of [100, 5000, 100_000]) texts.push(`${base},"${field}":${deep(levels)}}`);
  return texts;
}

/** What is wrong with an answer to junk: a 5xx, or a 4xx that is not a problem naming it. */
function fault(answer: Answer, what: string, mustRefuse = false): string | null {
  const shown = `${what} → ${answer.status} ${answer.body.slice(0, 200)}`;
  if (answer.status >= 500) return shown;
  if (answer.status < 400) return mustRefuse ? shown : null;
  if (answer.contentType.split(';')[0] !== 'application/problem+json') return shown;
  const problem = JSON.parse(answer.body) as { detail?: unknown };
  return typeof problem.detail === 'string' && problem.detail.length > 0 ? null : shown;
}

it('finds the routes in the OpenAPI document', () => {
  expect(operations.length).toBeGreaterThanOrEqual(10);
  expect(operations.map((o) => `${o.method} ${o.path}`)).toContain(
    'POST /v1/threads/{thread_id}/tasks',
  );
});

it('answers junk in every path parameter with a 4xx problem', async () => {
  const faults: (string | null)[] = [];
  for (const op of operations) {
    for (const name of [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
      for (const value of PATH_JUNK) {
        const path = fill(op.path, { name, value });
        const answer = await send(op.method, path, op.hasBody ? '{}' : undefined);
        faults.push(fault(answer, `${op.method} ${path.slice(0, 120)}`, true));
      }
    }
  }
  expect(faults.filter(Boolean)).toEqual([]);
});

it('answers junk, repeated and nested query parameters without a 5xx', async () => {
  const faults: (string | null)[] = [];
  for (const op of operations) {
    for (const name of [...op.query, 'last_event_id']) {
      const variants = [
        ...QUERY_JUNK.map((v) => `${name}=${v.replace('{name}', name)}`),
        `${name}=a&${name}=b`,
        `${name}[]=a`,
        `${name}[x]=a`,
        `${name}[x][y][z]=a`,
      ];
      for (const query of variants) {
        const path = `${fill(op.path)}?${query}`;
        const answer = await send(op.method, path, op.hasBody ? '{}' : undefined);
        faults.push(fault(answer, `${op.method} ${path}`));
      }
    }
  }
  expect(faults.filter(Boolean)).toEqual([]);
});

it('answers junk bodies on every route that reads one with a 4xx problem', async () => {
  const faults: (string | null)[] = [];
  let routes = 0;
  for (const op of operations.filter((o) => o.hasBody)) {
    const valid = validBody(op.path);
    if (!valid) continue;
    routes++;
    for (const text of junkBodies(valid)) {
      const answer = await send(op.method, fill(op.path), text);
      const refuse = /\\u0000|\\ud800|"k":\{"k":\{/.test(text);
      faults.push(fault(answer, `${op.method} ${op.path} ${text.slice(0, 160)}`, refuse));
    }
  }
  expect(routes).toBeGreaterThanOrEqual(2);
  expect(faults.filter(Boolean)).toEqual([]);
});

it('answers junk in the headers it reads without a 5xx', async () => {
  const faults: (string | null)[] = [];
  const junk: Record<string, string>[] = [
    { 'idempotency-key': 'k'.repeat(300) },
    { 'idempotency-key': '\u00e9\u00ff' },
    { 'idempotency-key': '' },
    { prefer: 'wait=1e309' },
    { prefer: 'wait=-1' },
    { prefer: 'wait=99999999999999999999, wait=2' },
    { 'last-event-id': '\u00e9' },
    { 'content-type': 'application/json; charset=latin-7' },
    { authorization: `Bearer ${'a'.repeat(10_000)}` },
  ];
  for (const op of operations) {
    for (const headers of junk) {
      const answer = await send(op.method, fill(op.path), op.hasBody ? '{}' : undefined, headers);
      faults.push(fault(answer, `${op.method} ${op.path} ${JSON.stringify(headers).slice(0, 80)}`));
    }
  }
  expect(faults.filter(Boolean)).toEqual([]);
});

it('answers junk cursors and Last-Event-ID values with a 400 problem', async () => {
  const faults: (string | null)[] = [];
  const junk = [
    '%00',
    '%FF',
    'evt_abc',
    'evt_-1',
    '1-2-3',
    'evt_99999999999999999999999',
    '\u00e9',
  ];
  for (const value of junk) {
    const answer = await send('GET', `/v1/threads/t/events`, undefined, {
      'last-event-id': encodeURIComponent(value).replace(/%25/g, '%'),
    });
    faults.push(answer.status === 400 ? fault(answer, value) : `${value} → ${answer.status}`);
  }
  expect(faults.filter(Boolean)).toEqual([]);
});
