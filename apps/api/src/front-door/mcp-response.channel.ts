import type { Response } from 'express';
import { JsonRpcWireError } from '@app/wire';

type JsonRpcId = string | number | null;

/**
 * The HTTP answer to one POSTed request. It is plain JSON unless the server sends requests to
 * the client first (the questions of a task, on `tasks/result`): the first such message turns
 * the answer into an SSE stream (Streamable HTTP allows either when the client accepts both),
 * and the final response then ends that stream.
 */
export class McpResponseChannel {
  private streaming = false;

  constructor(
    private readonly res: Response,
    /** The client listed `text/event-stream` in `Accept`: it can take requests before the answer. */
    readonly canStream: boolean,
  ) {}

  /** Sends a server message ahead of the answer; false when this client cannot take one. */
  send(message: Record<string, unknown>): boolean {
    if (!this.canStream || this.closed()) return false;
    if (!this.streaming) {
      this.streaming = true;
      this.res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
      });
    }
    this.write(message);
    return true;
  }

  answer(id: JsonRpcId, result: Record<string, unknown>): void {
    this.finish({ id, result }, 200);
  }

  error(id: JsonRpcId, error: JsonRpcWireError, status = 200): void {
    this.finish({ id, error: error.toJson() }, status);
  }

  private finish(message: Record<string, unknown>, status: number): void {
    if (this.closed()) return;
    if (!this.streaming && this.res.headersSent) {
      // Someone else began this answer (a listen stream that failed midway): end it as it is.
      this.res.end();
      return;
    }
    if (!this.streaming) {
      this.res.status(status).json({ jsonrpc: '2.0', ...message });
      return;
    }
    this.write(message);
    this.res.end();
  }

  private write(message: Record<string, unknown>): void {
    this.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
  }

  private closed(): boolean {
    return this.res.writableEnded || this.res.destroyed;
  }
}
