import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// OpenAPI shapes only; the answers are built in webhooks.controller.ts.

const TIME = { type: String, format: 'date-time' } as const;

export class CreateWebhookDto {
  @ApiProperty({
    description:
      'Receiver URL: https, resolving to public addresses only (http and private addresses only when the operator sets WEBHOOK_ALLOW_PRIVATE_NETWORKS=true)',
    example: 'https://hooks.example.com/mcp-tasks',
  })
  url!: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 500 })
  description?: string | null;
}

export class WebhookDto {
  @ApiProperty({ example: 'wh_abcdefghijklmnopqrstuvwxyz' }) id!: string;
  @ApiProperty() url!: string;
  @ApiProperty({ type: String, nullable: true }) description!: string | null;
  @ApiProperty(TIME) created_at!: string;
  @ApiProperty({ description: 'False once the receiver answered 410 Gone' }) active!: boolean;
  @ApiProperty({ ...TIME, nullable: true }) disabled_at!: string | null;
  @ApiProperty({ type: String, nullable: true }) disabled_reason!: string | null;
}

export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    description: 'The signing secret (`whsec_` + base64). Shown only in this answer: store it now.',
  })
  secret!: string;
}

export class WebhookListDto {
  @ApiProperty({ type: [WebhookDto] }) items!: WebhookDto[];
}

export class WebhookAttemptDto {
  @ApiProperty({ example: 'evt_3q2-7wEAAAB8bWYK1r9x0Q' }) event_id!: string;
  @ApiProperty({ example: 'task.completed' }) event_type!: string;
  @ApiProperty({ description: 'Attempt number of this delivery, from 1' }) attempt!: number;
  @ApiProperty({ enum: ['ok', 'retry', 'dead_letter', 'disabled', 'refused', 'skipped'] })
  outcome!: string;
  @ApiProperty({ type: Number, nullable: true, description: "The receiver's HTTP status" })
  status_code!: number | null;
  @ApiProperty() duration_ms!: number;
  @ApiProperty({ type: String, nullable: true }) error!: string | null;
  @ApiProperty(TIME) attempted_at!: string;
  @ApiProperty({ ...TIME, nullable: true, description: 'When the next attempt is due, if any' })
  next_retry_at!: string | null;
  @ApiProperty({ description: 'The delivery gave up for good with this attempt' })
  dead_lettered!: boolean;
}

export class WebhookAttemptListDto {
  @ApiProperty({ type: [WebhookAttemptDto], description: 'Newest first' })
  items!: WebhookAttemptDto[];
}
