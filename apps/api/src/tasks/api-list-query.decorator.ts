import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { DEFAULT_LIMIT, MAX_LIMIT, STATUS_FILTERS } from './list-query';

/**
 * Documents the list filters: both task lists take these; the list across threads also takes
 * `thread_id`. QueryParamsGuard accepts exactly the parameters documented here.
 */
export function ApiListQuery(options: { acrossThreads?: boolean } = {}): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'status',
      required: false,
      enum: [...STATUS_FILTERS],
      description: 'active (queued, working, input_required), terminal, or one status',
    }),
    ApiQuery({ name: 'toolset', required: false, description: 'Only tasks of this toolset' }),
    ...(options.acrossThreads
      ? [ApiQuery({ name: 'thread_id', required: false, description: 'Only tasks of this thread' })]
      : []),
    ApiQuery({
      name: 'created_after',
      required: false,
      schema: { type: 'string', format: 'date-time' },
      description: 'Only tasks created strictly after this instant (RFC 3339, with an offset)',
    }),
    ApiQuery({
      name: 'created_before',
      required: false,
      schema: { type: 'string', format: 'date-time' },
      description: 'Only tasks created strictly before this instant (RFC 3339, with an offset)',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description:
        'next_cursor of the previous page (opaque); pass the same filters with it as with the first page',
    }),
  );
}
