import { isRecord } from '@app/common';

// Reading a 2026-07-28 answer: a JSON body, or the response among an SSE stream's events
// (docs/connections.md, "MCP 2026-07-28" and "Message size").

/** A message of an SSE answer that is not its response (a notification, a request). */
export type OtherMessage = (message: Record<string, unknown>) => void;

/**
 * The JSON-RPC message an answer carries: its JSON body, or from an SSE answer the response with
 * our id, read event by event as they stream in (the other messages go to `onOther`, which must
 * not throw). Undefined for a web page or what does not parse.
 */
export async function answered(
  response: Response,
  id: number,
  onOther?: OtherMessage,
): Promise<unknown> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || !response.body) {
    const text = await response.text();
    return type.includes('text/html') ? undefined : parse(text);
  }
  return responseEvent(response.body, id, onOther);
}

/**
 * The response with our id among an SSE stream's events. Only the event being read is held
 * (each bounded by `maxMessageBytes`, docs/connections.md, "Message size"), and once the
 * response is there the request is answered without waiting for the stream's end: a server that
 * keeps the stream open after it (or a proxy that holds it) does not hold the request until its
 * deadline. The rest is read in the background for a moment, so that the connection is kept when
 * the server ends the stream just after, and let go of otherwise (a stream already ended or
 * failed has nothing left to read).
 */
async function responseEvent(
  body: ReadableStream<Uint8Array>,
  id: number,
  onOther?: OtherMessage,
): Promise<unknown> {
  const reader = body.getReader();
  try {
    for await (const message of sseMessages(reader)) {
      if (!isRecord(message)) continue;
      if (message.id === id) return message;
      onOther?.(message);
    }
    return undefined;
  } finally {
    drainThenRelease(reader);
  }
}

/**
 * The JSON-RPC message of each event of an SSE stream as it arrives (undefined for an event
 * without JSON data), the last one counted even without its closing blank line. The reader stays
 * the caller's: leaving the loop early neither cancels nor releases it.
 */
export async function* sseMessages(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): AsyncGenerator<unknown, void> {
  const decoder = new TextDecoder();
  // Where an event ends: a blank line (line breaks of LF or CRLF).
  const eventEnd = /\r?\n\r?\n/g;
  let pending = '';
  for (;;) {
    const chunk = await reader.read();
    // Where to look for the event's end again: a blank line may straddle two chunks.
    eventEnd.lastIndex = Math.max(0, pending.length - 3);
    pending += chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
    for (let end = eventEnd.exec(pending); end; end = eventEnd.exec(pending)) {
      const block = pending.slice(0, end.index);
      pending = pending.slice(end.index + end[0].length);
      eventEnd.lastIndex = 0;
      yield eventMessage(block);
    }
    if (chunk.done) {
      yield eventMessage(pending);
      return;
    }
  }
}

/** How long the rest of an answered SSE stream is read before it is let go of. */
const DRAIN_AFTER_RESPONSE_MS = 1_000;

/** Reads what is left of a stream to its end, or cancels it after DRAIN_AFTER_RESPONSE_MS. */
function drainThenRelease(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  const timer = setTimeout(
    () => void reader.cancel().catch(() => undefined),
    DRAIN_AFTER_RESPONSE_MS,
  );
  timer.unref();
  void (async () => {
    try {
      while (!(await reader.read()).done);
    } catch {
      // A stream that breaks after its response: the request has its answer already.
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** The JSON-RPC message of one SSE event: its `data:` lines joined, parsed. */
function eventMessage(block: string): unknown {
  const data = block
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
  return data === '' ? undefined : parse(data);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
