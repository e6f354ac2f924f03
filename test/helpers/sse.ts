import { ClientRequest, IncomingMessage, request } from 'node:http';

/** One received server-sent event. */
export interface SseEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
}

/** A minimal EventSource over node:http that records everything it receives. */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  private buffer = '';
  private constructor(
    private readonly req: ClientRequest,
    readonly res: IncomingMessage,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.feed(chunk));
  }

  /** Opens the stream; resolves once the answer's headers arrived. */
  static open(url: string, token: string, lastEventId?: string): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${token}`,
        accept: 'text/event-stream',
      };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const req = request(url, { headers }, (res) => resolve(new SseClient(req, res)));
      req.on('error', reject);
      req.end();
    });
  }

  get lastId(): string | undefined {
    return this.events.at(-1)?.id;
  }

  close(): void {
    this.req.destroy();
  }

  private feed(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        const colon = line.indexOf(':');
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
      }
      if (fields.data !== undefined) {
        this.events.push({
          id: fields.id,
          event: fields.event,
          data: JSON.parse(fields.data) as Record<string, unknown>,
        });
      }
    }
  }
}
