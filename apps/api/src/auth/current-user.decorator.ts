import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { Principal } from './token-verifier.service';

/** The request's {@link Principal}, as the guard stored it. */
export interface AuthenticatedRequest extends Request {
  principal?: Principal;
  /** Verifies the request's token again now: true while it still names the same user. */
  reverify?: () => Promise<boolean>;
}

/** The authenticated user's ID; only on routes behind the auth guard. */
export const CurrentUser = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentUser used on a route without authentication');
  return principal.userId;
});

/** The authenticated caller's tenant (AUTH_TENANT_CLAIM), or undefined. */
export const CurrentTenant = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentTenant used on a route without authentication');
  return principal.tenant;
});
