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
import { Settings, SETTINGS } from '@app/config';
import { EventRepository, STREAM_START, TaskRepository } from '@app/persistence';
import { EventAnswerLinks } from '@app/webhooks';
import { AuthenticatedRequest, CurrentUser } from '../auth/current-user.decorator';
import { ApiProblems } from '../problem/api-problems.decorator';
import { PROBLEM_KINDS } from '../problem/problem-kinds';
import { ThreadIdPipe } from '../tasks/id-params.pipe';
import { EventStreams } from './event-streams.service';
import { TaskEventDto } from './task-event.dto';
import { resumePosition } from './event-cursor';
import { MalformedRequest } from '../refusals/refusal';

const LAST_EVENT_ID_HEADER = ApiHeader({
  name: 'Last-Event-ID',
  required: false,
  description: 'Resume after this event (the `id:` of the last event received)',
});
const LAST_EVENT_ID_QUERY = ApiQuery({
  name: 'last_event_id',
  type: String,
  required: false,
  description: 'Same as Last-Event-ID, for clients that cannot set headers',
});
const EVENT_STREAM_ANSWER = ApiResponse({
  status: 200,
  description:
    'An event stream: per event, `id`, `event` (the type) and `data`, one TaskEventDto as JSON',
  // OpenAPI 3.0 cannot type the items of a stream; the schema is that of each `data:` line.
  content: { 'text/event-stream': { schema: { $ref: getSchemaPath(TaskEventDto) } } },
});

/**
 * The caller's events as server-sent events: one thread's (`GET /v1/threads/{thread_id}/events`)
 * or every thread's (`GET /v1/events`), resumable alike with Last-Event-ID.
 */
@ApiTags('events')
@ApiBearerAuth()
@ApiExtraModels(TaskEventDto)
@Controller('v1')
export class ThreadEventsController {
  private readonly answerLinks?: EventAnswerLinks;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly events: EventRepository,
    private readonly streams: EventStreams,
    tasks: TaskRepository,
  ) {
    this.answerLinks = EventAnswerLinks.fromSettings(settings.console, tasks);
  }

  /**
   * Without a position the stream starts at the oldest retained event of the thread (events are
   * kept EVENT_RETENTION_HOURS), so a client that subscribes after submitting misses nothing.
   */
  @Get('threads/:thread_id/events')
  @ApiParam({ name: 'thread_id', description: 'Caller-chosen thread ID' })
  @LAST_EVENT_ID_HEADER
  @LAST_EVENT_ID_QUERY
  @ApiOperation({
    summary:
      "Server-sent events of the thread's tasks (status changes, progress), resumable; heartbeat comments every 15 s",
  })
  @ApiProduces('text/event-stream')
  @EVENT_STREAM_ANSWER
  @ApiProblems(400, 401, PROBLEM_KINDS.rateLimited)
  stream(
    @CurrentUser() userId: string,
    @Param('thread_id', ThreadIdPipe) threadId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Req() req: AuthenticatedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.serve(userId, threadId, header ?? query, req, res);
  }

  /** The same stream across every thread of the caller, in one commit order. */
  @Get('events')
  @LAST_EVENT_ID_HEADER
  @LAST_EVENT_ID_QUERY
  @ApiOperation({
    summary:
      "Server-sent events of all the caller's tasks, every thread, resumable; heartbeat comments every 15 s",
  })
  @ApiProduces('text/event-stream')
  @EVENT_STREAM_ANSWER
  @ApiProblems(400, 401, PROBLEM_KINDS.rateLimited)
  streamAll(
    @CurrentUser() userId: string,
    @Headers('last-event-id') header: string | undefined,
    @Query('last_event_id') query: string | undefined,
    @Req() req: AuthenticatedRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.serve(userId, undefined, header ?? query, req, res);
  }

  /** One stream: its start (Last-Event-ID), a slot of the user's, then events until it ends. */
  private async serve(
    userId: string,
    threadId: string | undefined,
    given: unknown,
    req: AuthenticatedRequest,
    res: Response,
  ): Promise<void> {
    // A repeated query parameter arrives as an array (or an object with `[x]`): not a position.
    const cursor =
      given === undefined || given === ''
        ? STREAM_START
        : typeof given === 'string'
          ? await resumePosition(this.events, userId, threadId, given.trim())
          : null;
    if (cursor === null) {
      throw new MalformedRequest('Invalid Last-Event-ID.', [
        {
          path: 'Last-Event-ID',
          message:
            'must be the id of an event received from this stream and still retained; reconnect without it to start over',
        },
      ]);
    }
    const refusal = await this.streams.serve(res, {
      userId,
      threadId,
      cursor,
      reverify: req.reverify ?? (async () => false),
      answerLinks: this.answerLinks,
    });
    if (refusal) throw refusal;
  }
}
