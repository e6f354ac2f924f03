import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { TaskErrorCode, TaskStatus } from '@app/common';
import { TaskSummaryView, TaskView } from '@app/views';
import type { TaskListView } from './task-query.service';
import { InputRequiredDto } from './task-input.dto';

// OpenAPI shapes only: the API builds its answers with task.projection.ts (@app/views). Each
// shape `implements` its view type, so the compiler refuses a view field the DTO lacks or types
// differently, and a test checks that the documented fields are exactly the projected ones.

const ANY_JSON = { description: 'Any JSON value', nullable: true } as const;
const TIME = { type: String, format: 'date-time' } as const;

/** The body of a submit. */
export class SubmitTaskDto {
  @ApiProperty({ description: 'A toolset name from GET /v1/toolsets', example: 'demo-ordinary' })
  toolset!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The tool's arguments, validated against the toolset's input_schema",
    example: { seconds: 5 },
  })
  arguments!: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Your own JSON object (at most 4 KiB), echoed back on the task and its events',
    example: { ticket: 'OPS-42' },
  })
  metadata?: Record<string, unknown> | null;
}

export class TaskErrorDto implements NonNullable<TaskSummaryView['error']> {
  @ApiProperty({ enum: TaskErrorCode, description: 'Machine-readable failure kind' })
  code!: TaskErrorCode;

  @ApiProperty({ description: 'Human-readable failure text, at most 1,000 characters' })
  message!: string;
}

/** A task in lists: everything except the result and the upstream's question. */
export class TaskSummaryDto implements TaskSummaryView {
  @ApiProperty({ example: 'task_abcdefghijklmnopqrstuvwxyz', pattern: '^task_[a-z2-7]{26}$' })
  task_id!: string;
  @ApiProperty({ example: 'chat-42', pattern: '^[A-Za-z0-9._:-]{1,128}$' })
  thread_id!: string;
  @ApiProperty({ example: 'demo-ordinary' })
  toolset!: string;
  @ApiProperty({
    enum: TaskStatus,
    description: 'queued → working ↔ input_required → completed | failed | cancelled',
  })
  status!: TaskStatus;
  @ApiProperty(TIME) created_at!: string;
  @ApiProperty(TIME) updated_at!: string;
  @ApiProperty({ ...TIME, nullable: true, description: 'When the upstream accepted the work' })
  submitted_at!: string | null;
  @ApiProperty({ ...TIME, nullable: true, description: 'When the task became terminal' })
  completed_at!: string | null;
  @ApiProperty({
    ...TIME,
    nullable: true,
    description: 'When the gateway next acts on the task; null once terminal',
  })
  next_check_at!: string | null;
  @ApiProperty({ description: 'A cancel was requested (it may still be in progress)' })
  cancel_requested!: boolean;
  @ApiProperty({
    description:
      'Recent status checks failed TRACKING_DEGRADED_AFTER times in a row; the gateway keeps trying',
  })
  tracking_degraded!: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Latest progress `{current?, total?, message?}` reported upstream',
  })
  progress!: Record<string, unknown> | null;
  @ApiProperty({ type: TaskErrorDto, nullable: true, description: 'Set when status is failed' })
  error!: TaskErrorDto | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The latest transient problem (the gateway retries), or why a queued task waits: its toolset is unavailable',
  })
  last_error!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  metadata!: Record<string, unknown> | null;
}

/** One task in detail. */
export class TaskDto extends TaskSummaryDto implements TaskView {
  @ApiProperty({ ...ANY_JSON, description: 'The result; null while running or when truncated' })
  result!: unknown;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The start of a result too large to keep whole',
  })
  result_preview!: string | null;
  @ApiProperty({ description: 'The result exceeded the size bound; see result_preview' })
  result_truncated!: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'A reference `{uri, mime_type}` to a result kept elsewhere',
  })
  result_artifact!: Record<string, unknown> | null;
  @ApiProperty({
    type: () => InputRequiredDto,
    nullable: true,
    description: 'While input_required: the open questions by key; answer them with POST …/input',
  })
  input_required!: InputRequiredDto | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The failed task this one retries (POST …/retry made it); null for a task submitted afresh',
    example: null,
  })
  retry_of!: string | null;
}

export class TaskListDto implements TaskListView {
  @ApiProperty({ type: [TaskSummaryDto], description: 'Newest first' })
  items!: TaskSummaryDto[];
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last page',
  })
  next_cursor!: string | null;
}
