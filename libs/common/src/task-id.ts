import { randomBytes } from 'node:crypto';

/** Local task IDs: `task_` + 26 base32 chars (130 bits), unguessable and URL-safe. */
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * Random bytes are drawn 4 KiB at a time and each used once, as Node's `randomUUID` keeps its
 * own: a `randomBytes(26)` per ID (a call into OpenSSL each time) took 2.1 µs against 0.34 µs
 * from the pool (a node loop of 200,000 IDs), and every submit makes one.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/** `prefix` and `length` chars of base32 from a CSPRNG (5 random bits each). */
export function randomId(prefix: string, length = 26): string {
  if (used + length > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, length));
    used = 0;
  }
  let out = prefix;
  for (let i = used; i < used + length; i++) out += ALPHABET[pool[i] & 31];
  used += length;
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
