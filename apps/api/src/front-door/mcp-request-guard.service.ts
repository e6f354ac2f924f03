import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Settings, SETTINGS } from '@app/config';
import { bearerToken } from '../auth/bearer-first.middleware';
import { Principal, TokenVerifier } from '../auth/token-verifier.service';
import { Forbidden, Unauthenticated } from '../refusals/refusal';
import { parsedUrl, resourceMetadataUrl, servesResourceMetadataAt } from './resource-metadata';

/** A `Host` header worth naming back: a DNS name or an IP literal, with an optional port. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Why a request was refused before any JSON-RPC ran (answered as a problem). */
export type TransportRefusal = Forbidden | Unauthenticated;

/**
 * The transport-level checks of `/mcp`: the `Origin` (DNS-rebinding protection) and the bearer
 * token, with the same principals as `/v1`. A browser always sends `Origin`: one that is not a
 * loopback origin or configured in MCP_ALLOWED_ORIGINS is refused (403), which defeats a page
 * whose host name was rebound to this server. Clients that are not browsers send none.
 */
@Injectable()
export class McpRequestGuard {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly verifier: TokenVerifier,
  ) {}

  originRefusal(req: Request): Forbidden | null {
    const origin = req.headers.origin;
    if (origin === undefined) return null;
    if (this.settings.mcp.allowedOrigins.includes(origin)) return null;
    let host: string;
    try {
      host = new URL(origin).hostname.toLowerCase();
    } catch {
      host = '';
    }
    if (LOOPBACK_HOSTS.has(host)) return null;
    return new Forbidden('This Origin is not allowed.');
  }

  /**
   * What can be refused before the body is read (the API's bearer-first middleware): the Origin,
   * then a missing or malformed bearer, answered as {@link principal} would answer them.
   */
  earlyRefusal(req: Request): TransportRefusal | null {
    const origin = this.originRefusal(req);
    if (origin) return origin;
    if (this.anonymousAllowed(req)) return null;
    return bearerToken(req) !== undefined ? null : this.unauthorized(req);
  }

  /** @param fresh read an API key from the database, not from memory (a stream's re-check). */
  async principal(req: Request, fresh = false): Promise<Principal | Unauthenticated> {
    const anonymous = this.settings.mcp.anonymousUser;
    if (anonymous !== undefined && this.anonymousAllowed(req)) {
      return { userId: anonymous, via: 'anonymous' };
    }
    const token = bearerToken(req);
    const principal = token === undefined ? null : await this.verifier.verify(token, fresh);
    return principal ?? this.unauthorized(req);
  }

  private anonymousAllowed(req: Request): boolean {
    return this.settings.mcp.anonymousUser !== undefined && req.headers.authorization === undefined;
  }

  private unauthorized(req: Request): Unauthenticated {
    return new Unauthenticated(this.challenge(req));
  }

  /**
   * The protected-resource metadata (RFC 9728) that the MCP authorization specification has
   * clients read, when JWTs are configured: which authorization server issues tokens for this
   * resource. Null when only API keys are in use.
   */
  resourceMetadata(req: Request): Record<string, unknown> | null {
    const { issuer, jwksUrl, jwtSecret } = this.settings.auth;
    if (!issuer || (!jwksUrl && !jwtSecret)) return null;
    const resource = this.resourceUrl(req);
    if (!resource) return null;
    return {
      resource,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'MCP Task Gateway',
    };
  }

  /**
   * The 401's challenge, naming the metadata document when there is one. A `Host` that makes no
   * URL (`a b`, `x:y:z`) gets the plain `Bearer` challenge: the caller sent it, the 401 stands,
   * and nothing of it is echoed back.
   */
  private challenge(req: Request): string {
    const resource = this.resourceMetadata(req)?.resource;
    const base = typeof resource === 'string' ? parsedUrl(resource) : null;
    if (!base) return 'Bearer';
    return `Bearer resource_metadata="${resourceMetadataUrl(base)}"`;
  }

  /** Whether the metadata is served where a request's path has `suffix` after the prefix. */
  servesMetadataAt(suffix: string): boolean {
    return servesResourceMetadataAt(suffix, this.settings.mcp.publicUrl);
  }

  /** `/mcp`'s own URL: MCP_PUBLIC_URL, else from the request's `Host`, which must make a URL. */
  private resourceUrl(req: Request): string | null {
    if (this.settings.mcp.publicUrl) return this.settings.mcp.publicUrl;
    const host = req.headers.host ?? 'localhost';
    return HOST.test(host) ? (parsedUrl(`${req.protocol}://${host}/mcp`)?.href ?? null) : null;
  }

  /** Whether a value is a refusal rather than a principal. */
  static isRefusal(value: Principal | Unauthenticated): value is Unauthenticated {
    return value instanceof Unauthenticated;
  }
}
