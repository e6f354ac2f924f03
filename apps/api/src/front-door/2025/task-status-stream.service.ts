import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { EventCursor, EventRepository, STREAM_START, TaskEventRow } from '@app/persistence';
import { taskRowFromSnapshot } from '@app/views';
import { Principal } from '../../auth/token-verifier.service';
import { MalformedRequest, RateLimited } from '../../refusals/refusal';
import { formatEventCursor, resumePosition } from '../../events/event-cursor';
import { EventStreamHub } from '../../events/event-stream.hub';
import { ThreadEventStream } from '../../events/thread-event.stream';
import { McpTaskAccess } from '../mcp-task-access.service';
import { legacyTask } from '../mcp-task.view';

/** Why a stream could not be opened, as the controller answers it. */
export type StreamRefusal = MalformedRequest | RateLimited;

/**
 * The 2025-11-25 side's `GET /mcp`: an SSE stream of `notifications/tasks/status`, one for each
 * status event of the caller's tasks in the endpoint's thread (`?thread=`, else the default),
 * read from the event outbox that webhooks and `GET /v1/…/events` read. Nothing about it lives
 * on the replica: every frame's `id:` is the event's cursor, so a client that reconnects with
 * Last-Event-ID (to this replica or any other) resumes without loss or repeats. It starts "from
 * now" (a priming `id:` names where), bounded and re-verified like the `/v1` event stream.
 */
@Injectable()
export class TaskStatusStream {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly hub: EventStreamHub,
    private readonly access: McpTaskAccess,
    private readonly log: PinoLogger,
  ) {}

  async serve(
    req: Request,
    res: Response,
    principal: Principal,
    threadId: string,
    reverify: () => Promise<boolean>,
  ): Promise<StreamRefusal | null> {
    const userId = principal.userId;
    const given = req.headers['last-event-id'];
    let cursor: EventCursor | null = STREAM_START;
    let opening = '';
    if (typeof given === 'string' && given.trim() !== '') {
      cursor = await resumePosition(this.events, userId, threadId, given.trim());
    } else {
      const end = await this.events.threadEnd(userId, threadId);
      if (end) {
        cursor = end.cursor;
        opening = `id: ${formatEventCursor(end.taskId, end.sequence)}\ndata: \n\n`;
      }
    }
    if (cursor === null) {
      return new MalformedRequest(
        'Invalid Last-Event-ID: it must name an event this stream sent that is still retained; reconnect without it.',
      );
    }
    const { maxStreamsPerUser, recheckIntervalMs, maxAgeMs } = this.settings.api.sse;
    const release = this.hub.acquireSlot(userId, maxStreamsPerUser);
    if (!release) {
      return new RateLimited(
        `At most ${maxStreamsPerUser} event streams per user at once; close one or retry later.`,
        Math.ceil(recheckIntervalMs / 1000),
      );
    }
    try {
      const stream = new ThreadEventStream(
        res,
        this.events,
        this.hub,
        { userId, threadId, trackingDegradedAfter: this.settings.scheduling.trackingDegradedAfter },
        cursor,
        this.log,
        { reverify, recheckIntervalMs, maxAgeMs },
        (event, id) => this.frame(event, id),
        opening,
      );
      await stream.run();
    } finally {
      release();
    }
    return null;
  }

  /** A status event as the 2025-11-25 notification: the `Task` as the event recorded it. */
  private frame(event: TaskEventRow, id: string): string | null {
    if (event.type === 'task.progress') return null;
    const params = legacyTask(taskRowFromSnapshot(event.task), this.access.timing);
    const message = { jsonrpc: '2.0', method: 'notifications/tasks/status', params };
    return `id: ${id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
  }
}
