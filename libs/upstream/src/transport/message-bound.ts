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

/** Sees each chunk of one answer: false once a message in it is longer than `maxBytes`. */
export interface MessageCounter {
  readonly maxBytes: number;
  accepts(chunk: Uint8Array): boolean;
}

/**
 * Counts the bytes of SSE events as they stream in: an event ends at a blank line (two line
 * breaks in a row, each LF, CR or CRLF; a CRLF alone is one break). Every break byte is looked
 * at, so an event wholly inside one chunk is bounded too; the runs between breaks are skipped
 * with `indexOf`, not walked in JavaScript.
 */
class EventCounter implements MessageCounter {
  /** Bytes of the event not yet ended, its line breaks included. */
  private pending = 0;
  private prev1 = 0;
  private prev2 = 0;

  constructor(readonly maxBytes: number) {}

  accepts(chunk: Uint8Array): boolean {
    let i = 0;
    let nextLf = chunk.indexOf(LF);
    let nextCr = chunk.indexOf(CR);
    while (i < chunk.length) {
      if (nextLf !== -1 && nextLf < i) nextLf = chunk.indexOf(LF, i);
      if (nextCr !== -1 && nextCr < i) nextCr = chunk.indexOf(CR, i);
      const next = Math.min(
        nextLf === -1 ? chunk.length : nextLf,
        nextCr === -1 ? chunk.length : nextCr,
      );
      if (next > i) {
        // A run with no line break: it only lengthens the event.
        this.pending += next - i;
        this.prev2 = next - i >= 2 ? chunk[next - 2] : this.prev1;
        this.prev1 = chunk[next - 1];
        i = next;
      } else {
        const byte = chunk[i];
        this.pending += 1;
        const prev1 = this.prev1;
        if (
          prev1 === LF ||
          (prev1 === CR && byte === CR) ||
          (prev1 === CR && byte === LF && isBreak(this.prev2))
        ) {
          this.pending = 0;
        }
        this.prev2 = prev1;
        this.prev1 = byte;
        i += 1;
      }
      if (this.pending > this.maxBytes) return false;
    }
    return true;
  }
}

/** Any other answer is one message: its bytes in all. */
class BodyCounter implements MessageCounter {
  private total = 0;
  constructor(readonly maxBytes: number) {}

  accepts(chunk: Uint8Array): boolean {
    this.total += chunk.length;
    return this.total <= this.maxBytes;
  }
}

/**
 * The counter for one answer: an SSE stream (`eventStream`) may send any number of events, each
 * at most `maxBytes` long; any other body is one message, at most `maxBytes` in all.
 */
export function messageCounter(maxBytes: number, eventStream: boolean): MessageCounter {
  return eventStream ? new EventCounter(maxBytes) : new BodyCounter(maxBytes);
}

/**
 * The same rule for a stdio server's newline-delimited messages: feed each chunk of its stdout;
 * true once a line, ended or not, is longer than `maxBytes`.
 */
export class LineBound {
  private pending = 0;
  constructor(readonly maxBytes: number) {}

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
