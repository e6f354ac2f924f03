import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, JWTVerifyGetKey, jwtVerify } from 'jose';
import { Settings, SETTINGS } from '@app/config';
import { API_KEY_PREFIX, ApiKeyRepository } from '@app/persistence';
import { ApiKeyCache } from './api-key-cache';

/**
 * Who a request acts for. `userId` is a JWT's `sub` or an API key's user: one namespace.
 * `anonymous` is only ever the MCP front door's local-testing user (MCP_ANONYMOUS_USER).
 */
export interface Principal {
  userId: string;
  via: 'jwt' | 'api_key' | 'anonymous';
  /**
   * The JWT's AUTH_TENANT_CLAIM, when set and a non-empty string of at most 255 characters:
   * the principal of fair share for the tasks this caller submits (docs/leases.md, "Fair share").
   */
  tenant?: string;
}

/** Clock skew tolerated on `exp`/`nbf` between the issuer and this pod. */
const CLOCK_TOLERANCE_S = 5;
const MAX_USER_ID_CHARS = 255;

/**
 * Turns a bearer token into a {@link Principal}, or null. It never says why a token failed: the
 * guard answers every failure with the same 401, so a caller cannot probe which check it missed.
 */
@Injectable()
export class TokenVerifier {
  private readonly jwks?: JWTVerifyGetKey;
  private readonly secret?: Uint8Array;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly keys: ApiKeyRepository,
    private readonly keyCache: ApiKeyCache,
  ) {
    // One key set per process: jose caches the fetched keys and refetches on an unknown `kid`.
    if (settings.auth.jwksUrl) this.jwks = createRemoteJWKSet(new URL(settings.auth.jwksUrl));
    if (settings.auth.jwtSecret) this.secret = new TextEncoder().encode(settings.auth.jwtSecret);
  }

  /**
   * @param fresh read an API key from the database even when it is remembered: a long-lived
   *   stream re-checking its token must see a revoke however the revoke was written.
   */
  async verify(token: string, fresh = false): Promise<Principal | null> {
    if (token.startsWith(API_KEY_PREFIX)) return this.verifyApiKey(token, fresh);
    return this.verifyJwt(token);
  }

  private async verifyApiKey(key: string, fresh: boolean): Promise<Principal | null> {
    if (key.length > 200) return null;
    const owner = await this.keyCache.owner(key, fresh);
    if (!owner) return null;
    const minuteAgo = Date.now() - 60_000;
    if (!owner.lastUsedAt || owner.lastUsedAt.getTime() < minuteAgo) {
      await this.keys.touch(owner.id);
      // The remembered owner is this object: the next requests see the use and skip the write.
      owner.lastUsedAt = new Date();
    }
    return { userId: owner.userId, via: 'api_key' };
  }

  /** A missing or malformed tenant claim is no tenant: the user is then its own principal. */
  private tenantOf(payload: Record<string, unknown>): { tenant?: string } {
    const claim = this.settings.auth.tenantClaim;
    const value = claim === undefined ? undefined : payload[claim];
    return typeof value === 'string' && value.length > 0 && value.length <= MAX_USER_ID_CHARS
      ? { tenant: value }
      : {};
  }

  private async verifyJwt(token: string): Promise<Principal | null> {
    const { issuer, audience } = this.settings.auth;
    const options = {
      issuer,
      audience,
      clockTolerance: CLOCK_TOLERANCE_S,
      // A token without expiry would be valid forever once leaked.
      requiredClaims: ['exp', 'sub'],
    };
    try {
      const { payload } = this.jwks
        ? await jwtVerify(token, this.jwks, { ...options, algorithms: ['RS256', 'ES256'] })
        : this.secret
          ? await jwtVerify(token, this.secret, { ...options, algorithms: ['HS256'] })
          : { payload: undefined };
      const sub = payload?.sub;
      if (typeof sub !== 'string' || sub.length === 0 || sub.length > MAX_USER_ID_CHARS)
        return null;
      return { userId: sub, via: 'jwt', ...this.tenantOf(payload ?? {}) };
    } catch {
      // Bad signature, expired, wrong issuer or audience, an unreachable JWKS: all the same 401.
      return null;
    }
  }
}
