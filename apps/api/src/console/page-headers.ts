import type { Response } from 'express';

/**
 * The console's Content-Security-Policy (docs/console.md, "Security"): scripts, styles and
 * connections only from this origin (the one script file; no inline script or style, no eval),
 * nothing else loadable, forms only to here, and no framing by any page (clickjacking).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers of every console page: the CSP, no framing, no sniffing, no referrer, no caching. */
export function setPageHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // An answer link's token is in the page's URL: no Referer may carry it elsewhere.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}
