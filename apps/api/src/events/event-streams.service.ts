import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { EventCursor, EventRepository } from '@app/persistence';
import type { EventAnswerLinks } from '@app/webhooks';
import { RateLimited } from '../refusals/refusal';
import { EventStreamHub } from './event-stream.hub';
import { EventFrame, ThreadEventStream } from './thread-event.stream';

/** One stream a caller asked for: whose events, from where, and how each is written. */
export interface StreamRequest {
  userId: string;
  /** Undefined: every thread of the user. */
  threadId: string | undefined;
  cursor: EventCursor;
  /** Verifies the caller again every `SSE_RECHECK_INTERVAL_MS`; false ends the stream. */
  reverify: () => Promise<boolean>;
  /** Answer links for `task.input_required` events; undefined: none. */
  answerLinks?: Pick<EventAnswerLinks, 'forEvent'>;
  /** How each event is written; the `/v1` event view when left out. */
  frame?: EventFrame;
  /** Written first: a priming `id:` line. */
  opening?: string;
}

/**
 * Opens the replica's event streams: the `/v1` event streams, the 2025-11-25 side's `GET /mcp`
 * and the console's task page. Every one of them counts against its user's
 * `SSE_MAX_STREAMS_PER_USER` on this replica and lives by the same `SSE_*` settings, here.
 */
@Injectable()
export class EventStreams {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly events: EventRepository,
    private readonly hub: EventStreamHub,
    private readonly log: PinoLogger,
  ) {}

  /**
   * Serves the stream until it ends, in one of its user's stream slots. When the user holds
   * every slot, nothing is written and the refusal is returned for the caller to answer in its
   * own protocol.
   */
  async serve(res: Response, request: StreamRequest): Promise<RateLimited | null> {
    const { maxStreamsPerUser, recheckIntervalMs, maxAgeMs } = this.settings.api.sse;
    const release = this.hub.acquireSlot(request.userId, maxStreamsPerUser);
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
        {
          userId: request.userId,
          threadId: request.threadId,
          trackingDegradedAfter: this.settings.scheduling.trackingDegradedAfter,
          answerLinks: request.answerLinks,
        },
        request.cursor,
        this.log,
        { reverify: request.reverify, recheckIntervalMs, maxAgeMs },
        request.frame,
        request.opening,
      );
      await stream.run();
    } finally {
      release();
    }
    return null;
  }
}
