import { randomBytes } from 'node:crypto';

/** Local task IDs: `task_` + 26 base32 chars (130 bits), unguessable and URL-safe. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

export function randomId(prefix: string, length = 26): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

export function newTaskId(): string {
  return randomId('task_');
}

export const TASK_ID_PATTERN = /^task_[a-z2-7]{26}$/;
export const THREAD_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
