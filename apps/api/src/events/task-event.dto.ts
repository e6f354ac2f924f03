import { ApiProperty } from '@nestjs/swagger';
import { EVENT_TYPES, toEventView } from '@app/views';
import { TaskSummaryDto } from '../tasks/task.dto';

// OpenAPI shape only: events are built by toEventView (@app/views), which SSE and webhook
// deliveries share; a test checks real events against this schema field by field.

/** One event, as an SSE `data:` line and as a webhook request body (events.md, "The event"). */
export class TaskEventDto implements ReturnType<typeof toEventView> {
  @ApiProperty({
    example: 'evt_3q2-7wEAAAB8bWYK1r9x0Q',
    description: 'Unique; the SSE `id:` and the `webhook-id` header. Receivers dedup on it.',
  })
  id!: string;

  @ApiProperty({ enum: EVENT_TYPES, example: 'task.completed' })
  type!: (typeof EVENT_TYPES)[number];

  @ApiProperty({ type: String, format: 'date-time' })
  created_at!: string;

  @ApiProperty({
    type: 'integer',
    example: 2,
    description: "Increases with each of this task's events; order a task's events by it",
  })
  sequence!: number;

  @ApiProperty({ type: TaskSummaryDto, description: 'The task as it was when the event happened' })
  task!: TaskSummaryDto;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      '`{previous_status}` for status changes, `{progress}` for task.progress; nothing else',
    example: { previous_status: 'working' },
  })
  data!: Record<string, unknown>;
}
