import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { Settings, SETTINGS } from '@app/config';
import { Principal, TokenVerifier } from '../auth/token-verifier.service';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Why a request was refused before any JSON-RPC ran. */
export interface Refusal {
  status: 400 | 401 | 403 | 406 | 429;
  detail: string;
  headers: Record<string, string>;
}

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

  originRefusal(req: Request): Refusal | null {
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
    return { status: 403, detail: 'This Origin is not allowed.', headers: {} };
  }

  /** @param fresh read an API key from the database, not from memory (a stream's re-check). */
  async principal(req: Request, fresh = false): Promise<Principal | Refusal> {
    const anonymous = this.settings.mcp.anonymousUser;
    if (anonymous !== undefined && req.headers.authorization === undefined) {
      return { userId: anonymous, via: 'anonymous' };
    }
    const match = BEARER.exec(req.headers.authorization ?? '');
    const principal = match ? await this.verifier.verify(match[1], fresh) : null;
    if (principal) return principal;
    return {
      status: 401,
      detail: 'A valid bearer token is required.',
      headers: { 'WWW-Authenticate': this.challenge(req) },
    };
  }

  /**
   * The protected-resource metadata (RFC 9728) that the MCP authorization specification has
   * clients read, when JWTs are configured: which authorization server issues tokens for this
   * resource. Null when only API keys are in use.
   */
  resourceMetadata(req: Request): Record<string, unknown> | null {
    const { issuer, jwksUrl, jwtSecret } = this.settings.auth;
    if (!issuer || (!jwksUrl && !jwtSecret)) return null;
    return {
      resource: this.resourceUrl(req),
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'MCP Task Gateway',
    };
  }

  private challenge(req: Request): string {
    if (!this.resourceMetadata(req)) return 'Bearer';
    const base = new URL(this.resourceUrl(req));
    const metadata = `${base.origin}/.well-known/oauth-protected-resource${base.pathname}`;
    return `Bearer resource_metadata="${metadata}"`;
  }

  private resourceUrl(req: Request): string {
    if (this.settings.mcp.publicUrl) return this.settings.mcp.publicUrl;
    return `${req.protocol}://${req.headers.host ?? 'localhost'}/mcp`;
  }

  /** Whether a value is a {@link Refusal} rather than a principal. */
  static isRefusal(value: Principal | Refusal): value is Refusal {
    return 'status' in value;
  }
}
