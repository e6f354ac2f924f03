import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { API_KEY_PREFIX, ApiKeyRepository, Database } from '@app/persistence';

/** The user the embedded default's development key acts for. */
export const DEV_USER = 'dev';
const DEV_KEY_NAME = 'development (npm start)';

/**
 * The embedded default's development API key, kept in `file` (mode 0600). Created at first
 * start; kept while it is still valid. If the database no longer knows it (the embedded data
 * was wiped) it is registered again, since the file is the developer's copy; if it was revoked
 * a new key replaces the file, because a revoke must stick.
 */
export async function ensureDevApiKey(
  db: Database,
  file: string,
): Promise<{ created: boolean; key: string }> {
  const keys = new ApiKeyRepository(db);
  const existing = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (existing.startsWith(API_KEY_PREFIX)) {
    if (await keys.findActive(existing)) return { created: false, key: existing };
    if (!(await keys.isKnown(existing))) {
      await keys.register(DEV_USER, DEV_KEY_NAME, existing);
      return { created: false, key: existing };
    }
  }
  const { key } = await keys.create(DEV_USER, DEV_KEY_NAME);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600); // `mode` applies only when the file is created
  return { created: true, key };
}

/**
 * The local answer-link signing key (ANSWER_LINK_KEYS), kept in `file` (mode 0600): random at
 * first start and kept, so links sent before a restart still open after it.
 */
export function ensureDevLinkKey(file: string): string {
  const existing = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (existing.length >= 32) return existing;
  const key = randomBytes(32).toString('base64url');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return key;
}
