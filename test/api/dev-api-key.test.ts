// Guards against the embedded default's development key being lost, world-readable, or
// resurrected after a revoke.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeyRepository } from '@app/persistence';
import { ensureDevApiKey } from '../../apps/local/src/dev-api-key';
import { createTestDatabase, TestDatabase } from '../helpers/db';

let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'mtg-devkey-'));
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

it('creates, keeps, re-registers after a wipe, and replaces after a revoke', async () => {
  const file = join(dir, 'nested', 'dev-api-key');
  const keys = new ApiKeyRepository(db.db);
  const first = await ensureDevApiKey(db.db, file);
  expect(first.created).toBe(true);
  expect(readFileSync(file, 'utf8').trim()).toBe(first.key);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect((await keys.findActive(first.key))?.userId).toBe('dev');

  expect(await ensureDevApiKey(db.db, file)).toEqual({ created: false, key: first.key });

  await db.db.query(`DELETE FROM api_keys`);
  expect(await ensureDevApiKey(db.db, file)).toEqual({ created: false, key: first.key });
  const [{ id }] = await keys.list('dev');
  expect(await keys.findActive(first.key)).not.toBeNull();

  await keys.revoke(id);
  const replaced = await ensureDevApiKey(db.db, file);
  expect(replaced.created).toBe(true);
  expect(replaced.key).not.toBe(first.key);
  expect(readFileSync(file, 'utf8').trim()).toBe(replaced.key);
  expect(await keys.findActive(first.key)).toBeNull();
});
