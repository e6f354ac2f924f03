import type { ServerResponse } from 'node:http';

/** Where one 2026-07-28 request's notifications and answer go, on any transport. */
export interface AnswerSink {
  /** A notification of the request (a held call's progress), before its answer. */
  notify(method: string, params: Record<string, unknown>): void;
  /** The answer; `status` is its HTTP status where there is one. */
  send(status: number, body: unknown): void;
}

/**
 * One 2026-07-28 answer over HTTP: plain JSON, unless the request's handler sends a notification first
 * (a held call's progress). Then the answer becomes an SSE stream: each notification an event,
 * and the response the last one, as a Streamable HTTP server answers a POST.
 */
export class Answer2026Writer implements AnswerSink {
  private streaming = false;

  constructor(private readonly res: ServerResponse) {}

  /** Sends a notification for this request, switching the answer to SSE at the first one. */
  notify(method: string, params: Record<string, unknown>): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    }
    this.event({ jsonrpc: '2.0', method, params });
  }

  /** Ends the answer with the response (its HTTP status only counts while still plain JSON). */
  send(status: number, body: unknown): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (this.streaming) {
      this.event(body);
      return void this.res.end();
    }
    this.res.writeHead(status, { 'content-type': 'application/json' });
    this.res.end(JSON.stringify(body));
  }

  private event(message: unknown): void {
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
}
