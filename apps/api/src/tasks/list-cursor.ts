import { TASK_ID_PATTERN } from '@app/common';
import { TaskPagePosition } from '@app/persistence';

const EXACT_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * Keyset cursors: base64url of `<created_at with microseconds>|<task_id>`. Opaque to callers,
 * so the encoding may change; validated strictly on the way in, so a forged or mangled cursor
 * is a 400 and never reaches SQL as a bad timestamp (a 500).
 */
export function encodeCursor(position: TaskPagePosition): string {
  return Buffer.from(`${position.createdAt}|${position.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names, or null if it is not one this API issued. */
export function decodeCursor(cursor: string): TaskPagePosition | null {
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
  const [createdAt, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !createdAt || !id) return null;
  if (!EXACT_ISO.test(createdAt) || Number.isNaN(Date.parse(createdAt))) return null;
  if (!TASK_ID_PATTERN.test(id)) return null;
  return { createdAt, id };
}
