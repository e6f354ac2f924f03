import { existsSync, readFileSync } from 'node:fs';
import { DataSource } from 'typeorm';

/**
 * The embedded default's development API key, kept in `.data/dev-api-key`. Created by the API's
 * key store (issue 6); until then the file is left as it is.
 */
export async function ensureDevApiKey(
  _dataSource: DataSource,
  file: string,
): Promise<{ created: boolean; key?: string }> {
  if (existsSync(file)) return { created: false, key: readFileSync(file, 'utf8').trim() };
  return { created: false };
}
