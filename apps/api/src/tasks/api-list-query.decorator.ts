import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { TaskStatus } from '@app/common';
import { DEFAULT_LIMIT, MAX_LIMIT } from './list-query';

/** Documents the list filters shared by both task lists. */
export function ApiListQuery(): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'status',
      required: false,
      enum: ['active', 'terminal', ...Object.values(TaskStatus)],
      description: 'active (queued, working, input_required), terminal, or one status',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    }),
    ApiQuery({
      name: 'cursor',
      required: false,
      description: 'next_cursor of the previous page (opaque)',
    }),
  );
}
