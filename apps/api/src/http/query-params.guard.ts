import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { DECORATORS } from '@nestjs/swagger';
import type { Request } from 'express';
import { UnknownQueryParameter } from '../refusals/refusal';

/**
 * Global guard, after authentication: a query parameter the route does not take is a 400 naming
 * it (docs/api.md, "Errors"), on every route the OpenAPI document describes, so a misspelt
 * `stauts=failed` is never silently an unfiltered list. A route's parameters are those its
 * handler reads by name (`@Query('limit')`) and those it documents (`@ApiQuery`, for a handler
 * that reads the whole query): what the document lists is what the route accepts. Routes kept
 * out of the document (the MCP front door, which takes `?thread=` and leaves the rest to its
 * transport) are not checked.
 */
@Injectable()
export class QueryParamsGuard implements CanActivate {
  private readonly known = new WeakMap<object, ReadonlySet<string> | null>();

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const allowed = this.allowedFor(context);
    if (allowed === null) return true;
    const query = context.switchToHttp().getRequest<Request>().query as Record<string, unknown>;
    const unknown = Object.keys(query).filter((name) => !allowed.has(name));
    if (unknown.length > 0) throw new UnknownQueryParameter(unknown.sort());
    return true;
  }

  /** The route's parameter names, or null for a route the document does not describe. */
  private allowedFor(context: ExecutionContext): ReadonlySet<string> | null {
    const handler = context.getHandler();
    const cached = this.known.get(handler);
    if (cached !== undefined) return cached;
    const controller = context.getClass();
    const excluded =
      Reflect.getMetadata(DECORATORS.API_EXCLUDE_CONTROLLER, controller) !== undefined ||
      Reflect.getMetadata(DECORATORS.API_EXCLUDE_ENDPOINT, handler) !== undefined;
    const allowed = excluded ? null : new Set([...namedQueryArgs(context), ...documented(handler)]);
    this.known.set(handler, allowed);
    return allowed;
  }
}

/** The names of `@Query('name')` arguments of the handler. */
function namedQueryArgs(context: ExecutionContext): string[] {
  const args = (Reflect.getMetadata(
    ROUTE_ARGS_METADATA,
    context.getClass(),
    context.getHandler().name,
  ) ?? {}) as Record<string, { data?: unknown }>;
  return Object.entries(args)
    .filter(
      ([key, arg]) => key.startsWith(`${RouteParamtypes.QUERY}:`) && typeof arg.data === 'string',
    )
    .map(([, arg]) => arg.data as string);
}

/** The query parameters `@ApiQuery` documents on the handler. */
function documented(handler: object): string[] {
  const parameters = (Reflect.getMetadata(DECORATORS.API_PARAMETERS, handler) ?? []) as {
    in?: string;
    name?: string;
  }[];
  return parameters.filter((p) => p.in === 'query' && p.name).map((p) => p.name as string);
}
