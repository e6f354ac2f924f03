import { createInterface } from 'node:readline';
import { isRecord } from '@app/common';
import type { DemoContext } from '../demo-context.interface';
import { stdioListenSink, type StdioListenSink } from '../push/listen-sink';
import type { AnswerSink } from './answer-2026.writer';
import { Mcp2026Handler } from './mcp-2026.handler';

type RequestId = string | number;

/**
 * The strict 2026-07-28 side over stdio (`--transport stdio --strict-2026`): each stdin line one
 * JSON-RPC message, each answer and notification one stdout line, handled by the HTTP side's
 * Mcp2026Handler with no headers (the body is the only signal on stdio). So `initialize`, which
 * carries no envelope, is refused as any request without one is; `notifications/cancelled` aborts
 * its request, which then gets no answer, or ends the subscription a `subscriptions/listen` opened
 * (push/listen-sink.ts: its messages are lines among the others, stamped with its ID).
 */
export function serveStdio2026(context: DemoContext): () => Promise<void> {
  const handler = new Mcp2026Handler(context);
  const running = new Map<RequestId, AbortController>();
  const listens = new Map<RequestId, StdioListenSink>();
  const write = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let body: unknown;
    try {
      body = JSON.parse(line);
    } catch {
      return write({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    }
    if (!isRecord(body)) return;
    const { id } = body;
    if (typeof id !== 'string' && typeof id !== 'number') {
      const cancelled = isRecord(body.params) ? body.params.requestId : undefined;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') {
        if (body.method === 'notifications/cancelled') {
          running.get(cancelled)?.abort();
          listens.get(cancelled)?.cancelled();
        }
      }
      return;
    }
    const cancel = new AbortController();
    running.set(id, cancel);
    const answer: AnswerSink = {
      notify: (method, params) => write({ jsonrpc: '2.0', method, params }),
      // A cancelled request gets no answer, as a 2025-11-25 server does.
      send: (_status, message) => {
        if (!cancel.signal.aborted) write(message);
      },
    };
    const listenOn = stdioListenSink(id, write, listens);
    void handler
      .respond(undefined, body, cancel.signal, answer, listenOn)
      .finally(() => running.delete(id));
  });
  return () => {
    context.listen2026?.close();
    lines.close();
    for (const request of running.values()) request.abort();
    return Promise.resolve();
  };
}
