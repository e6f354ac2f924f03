/**
 * The longest a submit may be held (docs/api.md, "Behaviour worth knowing"): below the 60 s idle timeout
 * common to proxies and load balancers, so a held answer is never cut by one.
 */
export const MAX_WAIT_SECONDS = 30;

/**
 * The `wait` preference of a `Prefer` header (RFC 7240), capped at {@link MAX_WAIT_SECONDS};
 * undefined when absent or malformed (RFC 7240: a preference the server does not understand is
 * ignored, never an error).
 */
export function parsePreferWait(header: string | string[] | undefined): number | undefined {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const value of values) {
    for (const preference of value.split(',')) {
      const match = /^\s*wait\s*=\s*"?(\d{1,9})"?\s*(;.*)?$/i.exec(preference);
      if (match) return Math.min(Number(match[1]), MAX_WAIT_SECONDS);
    }
  }
  return undefined;
}
