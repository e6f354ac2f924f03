/**
 * Paths pino replaces with "[Redacted]". Secrets reach log objects in three ways: HTTP headers
 * (bearer tokens, API keys, cookies), config objects of upstream servers (their `headers` and
 * `env` hold `${VAR}`-expanded credentials), and ad-hoc objects with a token-like key. pino's `*`
 * matches one level, so the key-based rules are listed at the top level and one level down.
 */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.*',
  '*.headers.*',
  'env.*',
  '*.env.*',
  ...['authorization', 'cookie', 'token', 'secret', 'password', 'apiKey'].flatMap((key) => [
    key,
    `*.${key}`,
  ]),
];

/** Replacement text; stable so log searches for leaked secrets can look for its absence. */
export const REDACTED = '[Redacted]';

/**
 * True for probe and scrape paths. They are hit every few seconds by the kubelet and Prometheus,
 * and logging them would drown every other access log line.
 */
export function isHealthPath(url: string | undefined): boolean {
  const path = (url ?? '').split('?', 1)[0];
  return path === '/metrics' || path === '/healthz' || path.startsWith('/healthz/');
}
