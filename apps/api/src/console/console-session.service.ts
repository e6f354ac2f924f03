import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Settings, SETTINGS } from '@app/config';
import { API_KEY_PREFIX, ApiKeyRepository, ConsoleSessionRepository } from '@app/persistence';
import { unauthorized } from '../auth/bearer-first.middleware';
import { TokenVerifier } from '../auth/token-verifier.service';
import { Forbidden, InvalidArguments } from '../refusals/refusal';

/** The session cookie; scoped to the console's paths, so the API's own routes never see it. */
export const SESSION_COOKIE = 'mtg_console';
export const CONSOLE_PATH = '/console';
/** The header a page's script sends its CSRF token in (docs/console.md, "CSRF"). */
export const CSRF_HEADER = 'x-csrf-token';

const MAX_TOKEN_CHARS = 8192;
/** A session ID: 32 random bytes, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** A signed-in browser: its user and the CSRF token its pages carry. */
export interface ConsoleSession {
  userId: string;
  csrfToken: string;
  /** The SHA-256 of the cookie, the session's key in the database. */
  idHash: string;
}

/**
 * Console sign-in (docs/console.md, "Sign-in and the session cookie"): an API key or a JWT is
 * verified as a bearer token would be, then exchanged for a random session ID in an HttpOnly,
 * SameSite=Strict cookie. The page never holds the credential: only the cookie, which its script
 * cannot read, and a CSRF token derived from the session ID.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly verifier: TokenVerifier,
    private readonly keys: ApiKeyRepository,
    private readonly sessions: ConsoleSessionRepository,
  ) {}

  /** Verifies `body.token` and sets the session cookie; every failure is the API's one 401. */
  async signIn(body: unknown, req: Request, res: Response): Promise<void> {
    requireSameOrigin(req);
    const token = (body as { token?: unknown } | null)?.token;
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS) {
      throw new InvalidArguments('Sign in with an API key or a token.', [
        { path: '/token', message: `must be a string of 1 to ${MAX_TOKEN_CHARS} characters` },
      ]);
    }
    const trimmed = token.trim();
    const principal = await this.verifier.verify(trimmed, true);
    if (!principal) throw unauthorized();
    const ttlMs = this.settings.console.sessionTtlSeconds * 1000;
    let expiresAt = new Date(Date.now() + ttlMs);
    let apiKeyId: string | null = null;
    if (trimmed.startsWith(API_KEY_PREFIX)) {
      apiKeyId = (await this.keys.findActive(trimmed))?.id ?? null;
      if (apiKeyId === null) throw unauthorized();
    } else {
      // A session never outlives the JWT it was made from.
      const exp = jwtExpiry(trimmed);
      if (exp === null) throw unauthorized();
      if (exp < expiresAt) expiresAt = exp;
    }
    const id = randomBytes(32).toString('base64url');
    await this.sessions.create(hashId(id), principal.userId, apiKeyId, expiresAt);
    const maxAge = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
    res.setHeader('Set-Cookie', this.cookie(req, id, maxAge));
  }

  /** Deletes the session (a copied cookie dies with it) and clears the cookie. */
  async signOut(session: ConsoleSession, req: Request, res: Response): Promise<void> {
    await this.sessions.delete(session.idHash);
    res.setHeader('Set-Cookie', this.cookie(req, '', 0));
  }

  /** The request's live session, or null (no cookie, unknown, expired, or its key revoked). */
  async find(req: Request): Promise<ConsoleSession | null> {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id === undefined || !SESSION_ID.test(id)) return null;
    const idHash = hashId(id);
    const owner = await this.sessions.find(idHash);
    return owner ? { userId: owner.userId, csrfToken: csrfOf(id), idHash } : null;
  }

  /** Whether the session is still live now (a long event stream asks again). */
  async stillLive(session: ConsoleSession): Promise<boolean> {
    return (await this.sessions.find(session.idHash))?.userId === session.userId;
  }

  /**
   * Refuses a change without the page's CSRF token (403): the token is derived from the session
   * ID, which another site can neither read nor guess. The origin must also be this one.
   */
  checkCsrf(session: ConsoleSession, req: Request): void {
    requireSameOrigin(req);
    const given = req.headers[CSRF_HEADER];
    const expected = Buffer.from(session.csrfToken);
    const ok =
      typeof given === 'string' &&
      given.length === expected.length &&
      timingSafeEqual(Buffer.from(given), expected);
    if (!ok) {
      throw new Forbidden('Missing or wrong CSRF token: reload the page.', [
        { path: CSRF_HEADER, message: "must be the token of the page's session" },
      ]);
    }
  }

  private cookie(req: Request, value: string, maxAgeSeconds: number): string {
    const secure =
      req.protocol === 'https' || this.settings.console.publicBaseUrl?.startsWith('https:');
    return [
      `${SESSION_COOKIE}=${value}`,
      `Path=${CONSOLE_PATH}`,
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Strict',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
  }
}

/**
 * A browser names where a request comes from (`Sec-Fetch-Site`, `Origin`); a cross-site one is
 * refused. Non-browser clients send neither and are judged by their credentials alone.
 */
function requireSameOrigin(req: Request): void {
  const site = req.headers['sec-fetch-site'];
  const origin = req.headers.origin;
  const crossSite = typeof site === 'string' && site !== 'same-origin' && site !== 'none';
  let otherOrigin = false;
  if (typeof origin === 'string') {
    try {
      otherOrigin = new URL(origin).host !== req.headers.host;
    } catch {
      otherOrigin = true;
    }
  }
  if (crossSite || otherOrigin) {
    throw new Forbidden('Console changes must come from the console itself.', [
      { path: 'Origin', message: 'must be the origin the console is served from' },
    ]);
  }
}

function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

function csrfOf(id: string): string {
  return createHmac('sha256', id).update('console-csrf').digest('base64url');
}

/** The value of cookie `name` in a Cookie header, if present once or more (the first wins). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** The `exp` of a JWT the verifier has just accepted (it requires `exp`), as a Date. */
function jwtExpiry(token: string): Date | null {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      exp?: unknown;
    };
    return typeof payload.exp === 'number' ? new Date(payload.exp * 1000) : null;
  } catch {
    return null;
  }
}
