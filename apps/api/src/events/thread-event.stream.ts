import type { Response } from 'express';
import { EventCursor, EventRepository, TaskEventRow } from '@app/persistence';
import { toEventView } from '@app/views';
import type { EventAnswerLinks } from '@app/webhooks';
import { formatEventCursor } from './event-cursor';
import { EventStreamHub } from './event-stream.hub';

/** Proxies close idle connections after 30–60 s; a comment line every 15 s keeps them open. */
export const HEARTBEAT_MS = 15_000;
// A lost notification costs at most this long; 5 s keeps an idle stream at 0.2 queries/s.
const FALLBACK_MS = 5000;
// Committed events wait for older running transactions (see thread-events.sql.ts); those end
// in milliseconds, so look again soon rather than after the fallback.
const UNSETTLED_RECHECK_MS = 25;
const PAGE = 200;

export interface StreamLog {
  warn(obj: object, msg: string): void;
}

/** How long a stream lives and how it re-checks who it serves. */
export interface StreamLimits {
  /** Verifies the caller's token again; false ends the stream (revoked key, expired JWT). */
  reverify: () => Promise<boolean>;
  recheckIntervalMs: number;
  /** The stream ends after this long; the client reconnects with Last-Event-ID. */
  maxAgeMs: number;
}

/**
 * How a stream writes each event: the SSE frame (with its `id:`), or null to pass over it (the
 * cursor still moves). `/v1/…/events` writes the event view; the MCP front door writes JSON-RPC
 * notifications from the same events.
 */
export type EventFrame = (
  event: TaskEventRow,
  id: string,
  scope: StreamScope,
) => string | null | Promise<string | null>;

/** Whose events a stream serves, and what their views need. */
export interface StreamScope {
  userId: string;
  /** Undefined: every thread of the user (`GET /v1/events`). */
  threadId: string | undefined;
  trackingDegradedAfter: number;
  /** Answer links for `task.input_required` events (docs/console.md); undefined: off. */
  answerLinks?: Pick<EventAnswerLinks, 'forEvent'>;
}

/**
 * One client's server-sent event stream of a thread: everything after its cursor, from the
 * database, then new events as they settle. Writes respect backpressure; any failure ends the
 * stream, and the client resumes from its Last-Event-ID without loss or repeats.
 */
export class ThreadEventStream {
  private closed = false;
  private wakeWait: () => void = () => undefined;

  constructor(
    private readonly res: Response,
    private readonly events: EventRepository,
    private readonly hub: EventStreamHub,
    private readonly scope: StreamScope,
    private cursor: EventCursor,
    private readonly log: StreamLog,
    private readonly limits: StreamLimits,
    private readonly frame: EventFrame = async (event, id) => {
      const view = toEventView(event, this.scope);
      const link = await this.scope.answerLinks?.forEvent(event);
      if (link) view.data.answer_url = link;
      return `id: ${id}\nevent: ${view.type}\ndata: ${JSON.stringify(view)}\n\n`;
    },
    /** Written first: a priming `id:` line lets a client resume from where it began. */
    private readonly opening = '',
  ) {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.wakeWait();
    this.res.end();
  }

  async run(): Promise<void> {
    const unregister = this.hub.register(this);
    this.res.on('close', () => this.close());
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    // `retry` sets EventSource's reconnect delay; the comment flushes headers through proxies.
    this.res.write(`retry: 2000\n: connected\n\n${this.opening}`);
    const heartbeat = setInterval(() => this.res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    const recheck = setInterval(() => void this.recheck(), this.limits.recheckIntervalMs);
    // The comment tells a human reader why; EventSource simply reconnects with Last-Event-ID.
    const maxAge = setTimeout(() => this.end('max age reached; reconnect'), this.limits.maxAgeMs);
    try {
      await this.pump();
    } catch (error) {
      this.log.warn({ err: error, thread_id: this.scope.threadId }, 'event stream failed');
    } finally {
      clearInterval(heartbeat);
      clearInterval(recheck);
      clearTimeout(maxAge);
      unregister();
      this.close();
    }
  }

  /** Ends the stream once the caller's token no longer verifies (a failing check counts too). */
  private async recheck(): Promise<void> {
    let valid = false;
    try {
      valid = await this.limits.reverify();
    } catch {
      valid = false;
    }
    if (!valid) this.end('authorization ended');
  }

  private end(why: string): void {
    if (this.closed) return;
    this.res.write(`: ${why}\n\n`);
    this.close();
  }

  private async pump(): Promise<void> {
    const { userId, threadId } = this.scope;
    while (!this.closed) {
      const page = await this.events.threadEvents(userId, threadId, this.cursor, PAGE);
      for (const event of page.events) {
        if (this.closed) return;
        const position = { tx: event.tx, id: event.id };
        const id = formatEventCursor(event.taskId, event.sequence);
        const frame = await this.frame(event, id, this.scope);
        this.cursor = position;
        if (frame !== null && !this.res.write(frame)) await this.drained();
      }
      if (page.events.length === PAGE) continue;
      const wait = this.hub.wait(
        userId,
        threadId,
        page.unsettled ? UNSETTLED_RECHECK_MS : FALLBACK_MS,
      );
      this.wakeWait = wait.wake;
      await wait.done;
    }
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}
