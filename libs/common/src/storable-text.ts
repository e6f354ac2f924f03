/**
 * Text Postgres cannot store exactly (docs/leases.md, "Unstorable text"): U+0000, which `text`
 * refuses as a byte and `jsonb` as the `\u0000` escape, and a lone UTF-16 surrogate (half of a
 * character outside the Basic Multilingual Plane, as in a string cut in the middle of an emoji),
 * which `jsonb` refuses as an escape (`\ud83d` alone: SQLSTATE 22P02) and the driver would turn
 * into U+FFFD in `text` without a word. The persistence layer replaces both in everything it
 * writes; the drivers refuse both in what must be sent back verbatim (remote task IDs).
 */
export const REPLACEMENT_CHAR = '\uFFFD';

/** A surrogate unit without its partner: a high one not followed by a low one, or vice versa. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * ES2024's `isWellFormed` (no lone surrogate), native since Node 20 and far faster than the
 * pattern on long texts (every string parameter of every query is checked); the pattern where
 * it is missing.
 */
const nativeWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean })
  .isWellFormed;

/** True when `text` holds U+0000 or a lone surrogate: Postgres cannot store it exactly. */
export function hasUnstorableText(text: string): boolean {
  if (text.includes('\u0000')) return true;
  return nativeWellFormed ? !nativeWellFormed.call(text) : LONE_SURROGATE.test(text);
}

/** What makes `text` unstorable, for an error message; null when nothing does. */
export function unstorableTextProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain U+0000 (NUL)';
  return hasUnstorableText(text) ? 'must not contain a lone UTF-16 surrogate' : null;
}

/** The text with each U+0000 and each lone surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  if (!hasUnstorableText(text)) return text;
  return text.replaceAll('\u0000', REPLACEMENT_CHAR).replace(LONE_SURROGATES, REPLACEMENT_CHAR);
}
