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

/**
 * The local marker stored as a task's remote ID while its call waits for answers before any
 * upstream task exists (a multi-round-trip round of an MCP 2026-07-28 upstream): nothing upstream
 * can be polled or cancelled then. The `mcp-tasks` driver writes it; the MCP front door reads it
 * to relay such rounds to its own client.
 */
export const ROUND_HANDLE_PREFIX = 'round:';

/** Whether a stored remote ID is a round marker rather than an upstream task's ID. */
export function isRoundHandle(remoteTaskId: string | null): boolean {
  return remoteTaskId !== null && remoteTaskId.startsWith(ROUND_HANDLE_PREFIX);
}
