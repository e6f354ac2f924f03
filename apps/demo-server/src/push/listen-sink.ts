import type { ServerResponse } from 'node:http';
import { META_SUBSCRIPTION_ID } from '@app/wire';

/**
 * Where one `subscriptions/listen` stream goes (task-listen-2026.ts): the transport's part of a
 * subscription, so the push itself is written once for HTTP and stdio.
 */
export interface ListenSink {
  /** Starts the stream: the SSE answer's head over HTTP; nothing over stdio. */
  open(): void;
  /** One message of the stream, already stamped with the subscription ID. */
  send(message: Record<string, unknown>): void;
  /** The server ends the subscription (it stops): the SSE answer ends; over stdio, it is answered. */
  end(): void;
  /** Calls `dropped` once the client has ended the subscription. */
  onDropped(dropped: () => void): void;
}

/** A listen over HTTP: its answer is the SSE stream, and the client ends it by closing it. */
export function sseListenSink(res: ServerResponse): ListenSink {
  return {
    open: () =>
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }),
    send: (message) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    end: () => res.end(),
    onDropped: (dropped) => res.once('close', dropped),
  };
}

/** A listen over stdio, as the line reader holds it until the client cancels it. */
export interface StdioListenSink extends ListenSink {
  /** The client's `notifications/cancelled` for the listen's ID. */
  cancelled(): void;
}

/**
 * A listen over stdio: its messages are stdout lines among every other answer, told apart by the
 * subscription ID they carry. The client ends it with `notifications/cancelled` for the listen's
 * ID; the server ends it by answering the listen, a graceful end (`resultType: complete`, the
 * subscription ID in `_meta`). `live` holds it, by the listen's ID, from open to end.
 */
export function stdioListenSink(
  id: string | number,
  write: (message: unknown) => void,
  live: Map<string | number, StdioListenSink>,
): StdioListenSink {
  let dropped: (() => void) | undefined;
  let over = false;
  const finish = (): boolean => {
    if (over) return false;
    over = true;
    live.delete(id);
    return true;
  };
  const sink: StdioListenSink = {
    open: () => void live.set(id, sink),
    send: (message) => {
      if (!over) write(message);
    },
    end: () => {
      if (!finish()) return;
      const result = { resultType: 'complete', _meta: { [META_SUBSCRIPTION_ID]: id } };
      write({ jsonrpc: '2.0', id, result });
    },
    onDropped: (callback) => {
      dropped = callback;
    },
    cancelled: () => {
      if (finish()) dropped?.();
    },
  };
  return sink;
}
