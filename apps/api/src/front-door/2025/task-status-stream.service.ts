import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { EventCursor, EventRepository, STREAM_START, TaskEventRow } from '@app/persistence';
import { taskRowFromSnapshot } from '@app/views';
import { Principal } from '../../auth/token-verifier.service';
import { MalformedRequest, RateLimited } from '../../refusals/refusal';
import { formatEventCursor, resumePosition } from '../../events/event-cursor';
import { EventStreams } from '../../events/event-streams.service';
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
    private readonly events: EventRepository,
    private readonly streams: EventStreams,
    private readonly access: McpTaskAccess,
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
    return this.streams.serve(res, {
      userId,
      threadId,
      cursor,
      reverify,
      frame: (event, id) => this.frame(event, id),
      opening,
    });
  }

  /** A status event as the 2025-11-25 notification: the `Task` as the event recorded it. */
  private frame(event: TaskEventRow, id: string): string | null {
    if (event.type === 'task.progress') return null;
    const params = legacyTask(taskRowFromSnapshot(event.task), this.access.timing);
    const message = { jsonrpc: '2.0', method: 'notifications/tasks/status', params };
    return `id: ${id}\nevent: message\ndata: ${JSON.stringify(message)}\n\n`;
  }
}
