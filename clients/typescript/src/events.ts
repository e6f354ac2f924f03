import type { TaskEvent } from './client';

/** One server-sent event: its `id:` (the resume position), its type and its data. */
export interface StreamedEvent {
  id: string;
  event: string;
  data: TaskEvent;
}

export interface FollowEventsOptions {
  baseUrl: string;
  token: string;
  /** One thread's events; every thread of the caller when omitted (`GET /v1/events`). */
  threadId?: string;
  /** Resume after this event (the `id` of the last one handled). */
  lastEventId?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Pause before reconnecting after the stream ended or failed; 2 s by default. */
  reconnectMs?: number;
  fetch?: typeof fetch;
}

/**
 * The caller's task events as they happen, resumed across reconnects: when the server ends the
 * stream (its maximum age, a restart) or the connection fails, it reconnects with `Last-Event-ID`
 * set to the last event yielded, so nothing is lost or repeated. Ends when `signal` aborts; a
 * refusal (401, 400 for an expired position) is thrown.
 */
export async function* followEvents(options: FollowEventsOptions): AsyncGenerator<StreamedEvent> {
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const url =
    options.threadId === undefined
      ? `${base}/v1/events`
      : `${base}/v1/threads/${encodeURIComponent(options.threadId)}/events`;
  let lastEventId = options.lastEventId;
  while (!options.signal?.aborted) {
    let response: Response;
    try {
      response = await doFetch(url, {
        headers: {
          Authorization: `Bearer ${options.token}`,
          Accept: 'text/event-stream',
          ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
        },
        signal: options.signal,
      });
    } catch {
      if (options.signal?.aborted) return;
      await pause(options.reconnectMs ?? 2000, options.signal); // unreachable now: try again
      continue;
    }
    if (!response.ok || !response.body) {
      throw new Error(`event stream refused: ${response.status} ${await response.text()}`);
    }
    try {
      for await (const event of parseStream(response.body)) {
        lastEventId = event.id;
        yield event;
      }
    } catch {
      if (options.signal?.aborted) return; // else a dropped connection: resume after the last event
    }
    await pause(options.reconnectMs ?? 2000, options.signal);
  }
}

/** The events of one `text/event-stream` body (comments and `retry:` lines skipped). */
async function* parseStream(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamedEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue; // a comment (": heartbeat") or a bare field
        const name = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        fields[name] =
          name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
      }
      if (fields.data !== undefined && fields.id !== undefined) {
        yield {
          id: fields.id,
          event: fields.event ?? 'message',
          data: JSON.parse(fields.data) as TaskEvent,
        };
      }
    }
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
