/**
 * Postgres cannot store U+0000: `text` refuses the byte and `jsonb` refuses the `\u0000` escape.
 * Upstream servers can send it anywhere (results, progress, error texts, questions, object keys),
 * and a write that fails on it would be retried forever. Every parameter bound by `Database`
 * (database.ts) goes through these functions, so no write can carry one. Why it is replaced, not
 * removed: docs/contracts.md, "NUL characters (U+0000)".
 */
export const NUL_REPLACEMENT = '\uFFFD';

/** The text with each U+0000 replaced by U+FFFD (the Unicode replacement character). */
export function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', NUL_REPLACEMENT) : text;
}

/**
 * JSON text of `value` for a `jsonb` parameter, with U+0000 replaced in every string and every
 * object key at any depth. The common case (no NUL anywhere) costs one `JSON.stringify`.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  // JSON.stringify writes U+0000 as the escape \u0000 (and a literal backslash as \\), so the
  // escape's absence proves there is no NUL.
  return json.includes('\\u0000') ? JSON.stringify(value, replaceNul) : json;
}

function replaceNul(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return withoutNul(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.some((key) => key.includes('\u0000'))) return value;
  // Renamed keys keep their order; if two keys meet after the replacement, the later wins, as
  // with a duplicate key in JSON text.
  return Object.fromEntries(
    keys.map((key) => [withoutNul(key), (value as Record<string, unknown>)[key]]),
  );
}

/**
 * Query parameters with U+0000 replaced in every string, including the elements of arrays (sent
 * as Postgres arrays). JSON parameters were built by storableJson and hold no NUL.
 */
export function storableParams(params: readonly unknown[]): unknown[] {
  return params.map(storableParam);
}

function storableParam(param: unknown): unknown {
  if (typeof param === 'string') return withoutNul(param);
  return Array.isArray(param) ? param.map(storableParam) : param;
}
