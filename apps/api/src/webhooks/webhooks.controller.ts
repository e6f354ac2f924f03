import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { WebhookRepository, WebhookSubscriptionRow } from '@app/persistence';
import { publicEventId } from '@app/views';
import { CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { WebhookSubscriptionsService } from './webhook-subscriptions.service';
import {
  CreatedWebhookDto,
  CreateWebhookDto,
  WebhookAttemptListDto,
  WebhookDto,
  WebhookListDto,
} from './webhook.dto';
import { MalformedRequest, NotFound, Refusal } from '../refusals/refusal';

const WEBHOOK_ID = /^wh_[a-z2-7]{26}$/;
const ID_PARAM = {
  name: 'id',
  pattern: WEBHOOK_ID.source,
  example: 'wh_abcdefghijklmnopqrstuvwxyz',
};

/**
 * The caller's webhook subscriptions. Another user's subscription answers 404, like a missing
 * one; the secret is shown once, in the 201, and never again.
 */
@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(
    private readonly hooks: WebhookRepository,
    private readonly subscriptions: WebhookSubscriptionsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Subscribe a URL to the events of all your tasks' })
  @ApiCreatedResponse({
    type: CreatedWebhookDto,
    description: 'Created (Location header); the secret is in this answer only',
    headers: {
      Location: {
        description: 'The subscription: `/v1/webhooks/{id}`',
        schema: { type: 'string' },
      },
    },
  })
  @ApiProblems([400, 'The body is not valid JSON'], 401, 413, 415, [
    422,
    '`validation`: URL missing, not https, resolving to a private address (unless allowed), unknown fields; `limit-reached`: 10 subscriptions already',
  ])
  async create(
    @CurrentUser() userId: string,
    @Body() body: CreateWebhookDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<CreatedWebhookDto> {
    const { row, secret } = await this.subscriptions.create(userId, body);
    res.status(201).setHeader('Location', `/v1/webhooks/${row.id}`);
    return { ...toView(row), secret };
  }

  @Get()
  @ApiOperation({ summary: 'Your webhook subscriptions (without their secrets)' })
  @ApiOkResponse({ type: WebhookListDto, description: 'Your subscriptions' })
  @ApiProblems(401)
  async list(@CurrentUser() userId: string): Promise<WebhookListDto> {
    return { items: (await this.hooks.list(userId)).map(toView) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiParam(ID_PARAM)
  @ApiOperation({ summary: 'Delete a subscription and its pending deliveries' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblems([400, 'Malformed webhook ID'], 401, 404)
  async remove(@CurrentUser() userId: string, @Param('id') id: string): Promise<void> {
    if (!(await this.hooks.delete(userId, checkId(id)))) throw notFound();
  }

  @Get(':id/deliveries')
  @ApiParam(ID_PARAM)
  @ApiQuery({
    name: 'limit',
    type: 'integer',
    minimum: 1,
    maximum: 100,
    required: false,
    description: '1..100, default 50',
  })
  @ApiOperation({ summary: 'Recent delivery attempts of a subscription, newest first' })
  @ApiOkResponse({ type: WebhookAttemptListDto, description: 'Newest first' })
  @ApiProblems([400, 'Malformed webhook ID or limit'], 401, 404)
  async deliveries(
    @CurrentUser() userId: string,
    @Param('id') id: string,
    @Query('limit') limitText?: string,
  ): Promise<WebhookAttemptListDto> {
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new MalformedRequest('Invalid limit.', [
        { path: 'limit', message: 'must be an integer from 1 to 100' },
      ]);
    }
    const sub = await this.hooks.find(userId, checkId(id));
    if (!sub) throw notFound();
    const attempts = await this.hooks.recentAttempts(sub.id, limit);
    return {
      items: attempts.map((a) => ({
        event_id: publicEventId(a.eventTaskId, a.eventSequence),
        event_type: a.eventType,
        attempt: a.attempt,
        outcome: a.outcome,
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        error: a.error,
        attempted_at: a.attemptedAt.toISOString(),
        next_retry_at: a.nextRetryAt?.toISOString() ?? null,
        dead_lettered: a.deadLettered,
      })),
    };
  }
}

/** A subscription as shown: a whitelist, so the secret column can never slip out. */
function toView(row: WebhookSubscriptionRow): WebhookDto {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    created_at: row.createdAt.toISOString(),
    active: row.disabledAt === null,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    disabled_reason: row.disabledReason,
  };
}

function checkId(id: string): string {
  if (!WEBHOOK_ID.test(id)) {
    throw new MalformedRequest('Invalid webhook ID.', [
      { path: 'id', message: 'must match ^wh_[a-z2-7]{26}$' },
    ]);
  }
  return id;
}

function notFound(): Refusal {
  return new NotFound('No such webhook.');
}
