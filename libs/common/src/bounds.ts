/**
 * Storage bounds from contracts.md ("What the gateway stores"). Values that depend on
 * settings (MAX_RESULT_BYTES, RESULT_PREVIEW_CHARS) are passed in by callers.
 */
export const ERROR_MESSAGE_STORED_CHARS = 4000;
export const ERROR_MESSAGE_SHOWN_CHARS = 1000;
export const LAST_ERROR_CHARS = 500;
export const JSON_FIELD_MAX_BYTES = 65536;
export const PROGRESS_MESSAGE_CHARS = 500;
export const REMOTE_TASK_ID_MAX_CHARS = 255;
export const MAX_POLL_INTERVAL_MS = 24 * 60 * 60 * 1000;
export const METADATA_MAX_BYTES = 4096;

/** Cuts text to at most `max` UTF-16 code units without splitting a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}
