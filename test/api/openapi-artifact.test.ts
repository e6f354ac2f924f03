// Guards against the committed openapi.json drifting from what the app serves (regenerate with `npm run openapi`), an operation without an ID a client would call, and a problem type the docs do not list.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { PROBLEM_KINDS, problemType } from '../../apps/api/src/problem/problem-kinds';
import { useApi } from '../helpers/api';

const ROOT = join(__dirname, '..', '..');
const api = useApi({ catalog: [] });

interface Document {
  paths: Record<string, Record<string, { operationId?: string }>>;
  components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> };
}
let served: Document;

beforeAll(async () => {
  served = (await request(api.url).get('/openapi.json').expect(200)).body as Document;
});

it('openapi.json at the repository root is the document the app serves', () => {
  const committed = JSON.parse(readFileSync(join(ROOT, 'openapi.json'), 'utf8')) as Document;
  expect(committed).toEqual(served);
});

it('every operation has its own camelCase operation ID', () => {
  const ids = Object.values(served.paths).flatMap((item) =>
    Object.values(item).map((operation) => operation.operationId ?? ''),
  );
  expect(ids.filter((id) => !/^[a-z][A-Za-z]+$/.test(id))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(
    expect.arrayContaining([
      'submitTask',
      'getTask',
      'listTasks',
      'cancelTask',
      'answerTask',
      'retryTask',
      'listToolsets',
      'streamEvents',
      'createWebhook',
    ]),
  );
});

it('every problem type is distinct, enumerated in the document and listed in docs/api.md', () => {
  const kinds = Object.values(PROBLEM_KINDS);
  expect(new Set(kinds.map((k) => k.slug)).size).toBe(kinds.length);
  expect(served.components.schemas.ProblemDto.properties.type.enum).toEqual(kinds.map(problemType));
  const docs = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const table = docs.slice(docs.indexOf('## Problem types'));
  const missing = kinds.filter(
    (k) => !new RegExp(`\\| \`${k.slug}\` +\\| ${k.status} +\\| ${k.title} +\\|`).test(table),
  );
  expect(missing.map((k) => k.slug)).toEqual([]);
});
