import { hasUnstorableText, storableText } from '@app/common';

/**
 * Text Postgres cannot store (U+0000, a lone UTF-16 surrogate; libs/common storable-text.ts) in
 * what is written: upstream servers can send either anywhere JSON allows (results, progress,
 * error texts, questions, object keys), the gateway's own cuts of a text could make one, and a
 * write that fails on it would be retried until the task's tracking timeout (and fail the
 * group-commit batch of every task beside it). Every parameter bound by `Database` (database.ts)
 * goes through these functions, so no write can carry one. Why replaced, not removed:
 * docs/contracts.md, "Text Postgres cannot store"; the rule: docs/leases.md, "Unstorable text".
 */

/**
 * `JSON.stringify` writes U+0000 as `\u0000` and a lone surrogate as its `\udXXX` escape (a
 * paired one as the character itself), and a literal backslash as `\\`: the absence of these
 * escapes proves the JSON holds neither. A false alarm (text that spells one out) only costs the
 * slower path.
 */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/;

/**
 * JSON text of `value` for a `jsonb` parameter, with U+0000 and lone surrogates replaced in every
 * string and every object key at any depth. The common case (neither anywhere) costs one
 * `JSON.stringify` and one scan of its output.
 */
export function storableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return UNSTORABLE_ESCAPE.test(json) ? JSON.stringify(value, replaceUnstorable) : json;
}

function replaceUnstorable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.some(hasUnstorableText)) return value;
  // Renamed keys keep their order; if two keys meet after the replacement, the later wins, as
  // with a duplicate key in JSON text.
  return Object.fromEntries(
    keys.map((key) => [storableText(key), (value as Record<string, unknown>)[key]]),
  );
}

/**
 * Query parameters with U+0000 and lone surrogates replaced in every string, including the
 * elements of arrays (sent as Postgres arrays). JSON parameters were built by storableJson.
 */
export function storableParams(params: readonly unknown[]): unknown[] {
  return params.map(storableParam);
}

function storableParam(param: unknown): unknown {
  if (typeof param === 'string') return storableText(param);
  return Array.isArray(param) ? param.map(storableParam) : param;
}
