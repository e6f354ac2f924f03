import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { NULL_BODY_STATUSES } from './signal-isolating.fetch';

/**
 * An upstream's message longer than its server's `maxMessageBytes`: refused while it streams in,
 * before it is held whole, so no upstream can exhaust a poller's memory with one answer
 * (docs/connections.md, "Message size"). The text is written for the task's reader.
 */
export class MessageTooLargeError extends Error {
  override readonly name = 'MessageTooLargeError';
  constructor(readonly maxBytes: number) {
    super(
      `the server sent a message longer than ${maxBytes} bytes (maxMessageBytes); it was refused`,
    );
  }
}

const LF = 0x0a;
const CR = 0x0d;
const isBreak = (byte: number): boolean => byte === LF || byte === CR;

/**
 * Counts the bytes of SSE events as they stream in: an event ends at a blank line (two line
 * breaks in a row, each LF, CR or CRLF; a CRLF alone is one break). Each byte is looked at once,
 * so an event wholly inside one chunk is bounded too.
 */
class EventCounter {
  /** Bytes of the event not yet ended, its line breaks included. */
  private pending = 0;
  private prev1 = 0;
  private prev2 = 0;

  /** Feeds a chunk; false as soon as the event under way is longer than `maxBytes`. */
  feed(chunk: Uint8Array, maxBytes: number): boolean {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      this.pending += 1;
      if (isBreak(byte)) {
        const prev1 = this.prev1;
        if (
          prev1 === LF ||
          (prev1 === CR && byte === CR) ||
          (prev1 === CR && byte === LF && isBreak(this.prev2))
        ) {
          this.pending = 0;
        }
      }
      if (this.pending > maxBytes) return false;
      this.prev2 = this.prev1;
      this.prev1 = byte;
    }
    return true;
  }
}

/**
 * Passes a response body through while counting: an SSE stream (`eventStream`) may send any
 * number of events, each at most `maxBytes` long; any other body is one message, at most
 * `maxBytes` in all. Past the bound the stream fails with {@link MessageTooLargeError}, and
 * piping cancels the source, so the rest is not downloaded.
 */
export function messageBound(
  maxBytes: number,
  eventStream: boolean,
): TransformStream<Uint8Array, Uint8Array> {
  const events = eventStream ? new EventCounter() : undefined;
  let total = 0;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      total += chunk.length;
      const within = events ? events.feed(chunk, maxBytes) : total <= maxBytes;
      if (within) controller.enqueue(chunk);
      else controller.error(new MessageTooLargeError(maxBytes));
    },
  });
}

/** A fetch whose response bodies pass through {@link messageBound}. */
export function messageBoundFetch(base: FetchLike, maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    return new Response(response.body.pipeThrough(messageBound(maxBytes, eventStream)), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The same rule for a stdio server's newline-delimited messages: feed each chunk of its stdout;
 * true once a line, ended or not, is longer than `maxBytes`.
 */
export class LineBound {
  private pending = 0;
  constructor(private readonly maxBytes: number) {}

  exceededBy(chunk: Uint8Array): boolean {
    let start = 0;
    for (let end = chunk.indexOf(LF); end >= 0; end = chunk.indexOf(LF, start)) {
      // A line wholly inside the chunk is measured too.
      if (this.pending + end - start > this.maxBytes) return true;
      this.pending = 0;
      start = end + 1;
    }
    this.pending += chunk.length - start;
    return this.pending > this.maxBytes;
  }
}
