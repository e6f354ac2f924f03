import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import { bearerToken, unauthorized } from './bearer-first.middleware';
import { AuthenticatedRequest } from './current-user.decorator';
import { IS_PUBLIC } from './public.decorator';
import { Principal, TokenVerifier } from './token-verifier.service';

/**
 * Verifies the request's `Authorization: Bearer <JWT or API key>` and stores its principal on
 * the request, or throws the one 401. Shared by {@link AuthGuard} and the submit fast path.
 */
export async function authenticate(
  verifier: TokenVerifier,
  req: IncomingMessage & Pick<AuthenticatedRequest, 'principal' | 'reverify'>,
): Promise<Principal> {
  const token = bearerToken(req);
  const principal = token === undefined ? null : await verifier.verify(token);
  if (!principal || token === undefined) throw unauthorized();
  req.principal = principal;
  // Long-lived answers (event streams) ask again later: a revoked key or an expired JWT must
  // end them, not only refuse the next request.
  req.reverify = async () => (await verifier.verify(token, true))?.userId === principal.userId;
  return principal;
}

/**
 * Global guard: every route needs `Authorization: Bearer <JWT or API key>` unless marked
 * {@link Public}. Any failure is one 401 with one detail (missing, malformed, expired, revoked
 * and wrong-audience tokens look alike), and a `WWW-Authenticate` challenge.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly verifier: TokenVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    await authenticate(this.verifier, context.switchToHttp().getRequest<AuthenticatedRequest>());
    return true;
  }
}
