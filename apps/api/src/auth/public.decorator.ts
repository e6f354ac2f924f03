import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'mtg:isPublic';

/** Marks a controller or route as reachable without a token (health probes only). */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(IS_PUBLIC, true);
