import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { EventRepository, STREAM_START, TaskRepository } from '@app/persistence';
import { EventAnswerLinks } from '@app/webhooks';
import { AuthenticatedRequest, CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { ProblemException } from '../problem/problem.exception';
import { ThreadIdPipe } from '../tasks/id-params.pipe';
import { EventStreamHub } from './event-stream.hub';
import { TaskEventDto } from './task-event.dto';
import { resumePosition } from './event-cursor';
import { ThreadEventStream } from './thread-event.stream';

/** GET /v1/threads/{thread_id}/events: the thread's events as server-sent events. */
@ApiTags('events')
@ApiBearerAuth()
@Controller('v1/threads')
export class ThreadEventsController {
  private readonly answerLinks?: EventAnswerLinks;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly hub: EventStreamHub,
    private readonly log: PinoLogger,
    tasks: TaskRepository,
  ) {
    this.answerLinks = EventAnswerLinks.fromSettings(settings.console, tasks);
  }

  /**
   * Without a position the stream starts at the oldest retained event of the thread (events are
   * kept EVENT_RETENTION_HOURS), so a client that subscribes after submitting misses nothing.
   */
  @Get(':thread_id/events')
  @ApiParam({ name: 'thread_id', description: 'Caller-chosen thread ID' })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'Resume after this event (the `id:` of the last event received)',
  })
  @ApiQuery({
    name: 'last_event_id',
    type: String,
    required: false,
    description: 'Same as Last-Event-ID, for clients that cannot set headers',
  })
  @ApiOperation({
    summary:
      "Server-sent events of the thread's tasks (status changes, progress), resumable; heartbeat comments every 15 s",
  })
  @ApiProduces('text/event-stream')
  @ApiExtraModels(TaskEventDto)
  @ApiResponse({
    status: 200,
    description:
      'An event stream: per event, `id`, `event` (the type) and `data`, one TaskEventDto as JSON',
    // OpenAPI 3.0 cannot type the items of a stream; the schema is that of each `data:` line.
    content: { 'text/event-stream': { schema: { $ref: getSchemaPath(TaskEventDto) } } },
  })
  @ApiProblems(400, 401, [429, 'Too many open event streams for this user'])
  async stream(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Req() req: AuthenticatedRequest,
    @Res() res: Response,
  ): Promise<void> {
    // A repeated query parameter arrives as an array (or an object with `[x]`): not a position.
    const given: unknown = header ?? query;
    const cursor =
      given === undefined || given === ''
        ? STREAM_START
        : typeof given === 'string'
          ? await resumePosition(this.events, userId, threadId, given.trim())
          : null;
    if (cursor === null) {
      throw new ProblemException(400, 'Invalid Last-Event-ID.', [
        {
          path: 'Last-Event-ID',
          message:
            'must be the id of an event received from this stream and still retained; reconnect without it to start over',
        },
      ]);
    }
    const { maxStreamsPerUser, recheckIntervalMs, maxAgeMs } = this.settings.api.sse;
    const release = this.hub.acquireSlot(userId, maxStreamsPerUser);
    if (!release) {
      throw new ProblemException(
        429,
        `At most ${maxStreamsPerUser} event streams per user at once; close one or retry later.`,
        undefined,
        { 'Retry-After': String(Math.ceil(recheckIntervalMs / 1000)) },
      );
    }
    try {
      const stream = new ThreadEventStream(
        res,
        this.events,
        this.hub,
        {
          userId,
          threadId,
          trackingDegradedAfter: this.settings.scheduling.trackingDegradedAfter,
          answerLinks: this.answerLinks,
        },
        cursor,
        this.log,
        { reverify: req.reverify ?? (async () => false), recheckIntervalMs, maxAgeMs },
      );
      await stream.run();
    } finally {
      release();
    }
  }
}
