/**
 * A plain JSON object (not null, not an array): the shape every request body, contract answer and
 * `_meta` must have before its fields are read.
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
