import type { EventCursor, EventRepository } from '@app/persistence';

/** Where a client asks to resume: after one of its events, or after a legacy stream position. */
export type ResumePoint =
  { kind: 'event'; taskId: string; sequence: number } | { kind: 'position'; cursor: EventCursor };

const EVENT_KEY = /^([A-Za-z0-9_-]{1,64}):(\d{1,9})$/;
// The `<tx>-<id>` ids streams sent before they were opaque; still accepted, so a client connected
// during an upgrade resumes where it was.
const LEGACY_POSITION = /^(\d{1,20})-(\d{1,20})$/;

/**
 * The SSE `id:` of an event: base64url of its task and per-task sequence. Opaque to clients and
 * free of the outbox's global counters (transaction IDs, the event sequence), yet any replica can
 * turn it back into an exact stream position with one lookup.
 */
export function formatEventCursor(taskId: string, sequence: number): string {
  return Buffer.from(`${taskId}:${sequence}`, 'utf8').toString('base64url');
}

/** Parses a Last-Event-ID; null when it is none of the forms this API ever sent. */
export function parseEventCursor(text: string): ResumePoint | null {
  const legacy = LEGACY_POSITION.exec(text);
  if (legacy) return { kind: 'position', cursor: { tx: legacy[1], id: legacy[2] } };
  if (!/^[A-Za-z0-9_-]{1,120}$/.test(text)) return null;
  const key = EVENT_KEY.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!key || formatEventCursor(key[1], Number(key[2])) !== text) return null;
  return { kind: 'event', taskId: key[1], sequence: Number(key[2]) };
}

/**
 * The stream position a Last-Event-ID names, looked up (any replica can); null if it names none.
 * Both event streams (the thread's SSE and MCP's task status notifications) resume with it.
 */
export async function resumePosition(
  events: Pick<EventRepository, 'positionOf'>,
  userId: string,
  threadId: string | undefined,
  text: string,
): Promise<EventCursor | null> {
  const point = parseEventCursor(text);
  if (point === null) return null;
  if (point.kind === 'position') return point.cursor;
  return events.positionOf(userId, threadId, point.taskId, point.sequence);
}
