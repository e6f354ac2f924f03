import { JSON_FIELD_MAX_BYTES, cutText, type BoundedResult } from '@app/common';
import type { ResultLimits } from './contract-driver';
import { protocolError } from './driver.errors';

/**
 * Compact JSON of a value, refusing what JSON cannot carry faithfully. `JSON.stringify` turns
 * NaN and Infinity into `null` and a top-level `undefined` into nothing: storing either would
 * change the upstream's answer silently, so both are contract breaks, as are cycles and BigInt.
 * @param what names the field in the error, e.g. `status: "result"`.
 */
export function toCompactJson(value: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === 'number' && !Number.isFinite(item)) {
        throw new NotJsonError(`${String(item)} is not a JSON number`);
      }
      return item;
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw protocolError(`${what} must be JSON (${reason})`, error);
  }
  if (json === undefined) throw protocolError(`${what} must be JSON (got ${typeof value})`);
  return json;
}

class NotJsonError extends Error {}

/**
 * Applies the result bound: compact JSON of at most `maxResultBytes` (UTF-8) is stored as is;
 * anything bigger keeps only a preview of its first `previewChars` characters and no value,
 * because cut JSON would be a different (or invalid) document.
 */
export function boundResult(value: unknown, limits: ResultLimits, what: string): BoundedResult {
  const json = toCompactJson(value, what);
  if (Buffer.byteLength(json, 'utf8') <= limits.maxResultBytes) {
    // Re-parsed so the stored value is exactly the JSON we measured (no undefined members).
    return { value: JSON.parse(json) as unknown, preview: null, truncated: false };
  }
  return { value: null, preview: cutText(json, limits.previewChars), truncated: true };
}

/**
 * The bound on `result_artifact` and `input_required`: at most 65,536 bytes of JSON, else a
 * contract break; cutting would change what the upstream meant.
 */
export function boundJsonField(value: unknown, what: string): unknown {
  const json = toCompactJson(value, what);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > JSON_FIELD_MAX_BYTES) {
    throw protocolError(
      `${what} is ${bytes} bytes of JSON, over the ${JSON_FIELD_MAX_BYTES}-byte bound`,
    );
  }
  return JSON.parse(json) as unknown;
}
