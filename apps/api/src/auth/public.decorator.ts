import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'mtg:isPublic';

/**
 * Marks a controller or route as reachable without a bearer token: health probes, the MCP front
 * door (its own auth), and the console (its own session cookie, docs/console.md).
 */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);
