import { isRecord } from '@app/common';
import type { ServerConfig } from '@app/config';
import { encodeHeaderValue } from '@app/wire';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { signalIsolatingFetch } from '../transport/signal-isolating.fetch';
import { sseMessages } from './sse-answer.reader';
import type { TaskListen, TaskListenHandlers } from '../upstream.port';
import { STATELESS_PROTOCOL_VERSION, envelope } from './envelope';

/**
 * `subscriptions/listen` with `notifications.taskIds` on a 2026-07-28 server (docs/connections.md,
 * "Push"): one POST whose answer is an SSE stream, read as it arrives. The acknowledgement must
 * come within the server's `connectTimeoutMs`; after that the stream has no deadline and stays
 * open until either side closes it. Anything else the stream carries is skipped. Its events
 * are bounded one by one by the server's `maxMessageBytes`, as every upstream answer is
 * (docs/connections.md, "Message size"): a longer one ends the stream, and the owner listens again.
 */
export class TaskListenStream implements TaskListen {
  private readonly abort = new AbortController();
  private ended = false;

  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly config: ServerConfig,
    private readonly taskIds: readonly string[],
    private readonly handlers: TaskListenHandlers,
    base?: FetchLike,
  ) {
    // The one body wrapper of every upstream request: the message bound and the traceparent.
    this.fetchImpl = signalIsolatingFetch(base, undefined, config.maxMessageBytes) as typeof fetch;
  }

  start(): void {
    this.run().then(
      () => this.end('the server ended the stream'),
      (error: unknown) => this.end(error instanceof Error ? error.message : String(error)),
    );
  }

  close(): void {
    this.ended = true;
    this.abort.abort(new Error('closed'));
  }

  private end(reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.abort.abort(new Error(reason));
    this.handlers.onEnd(reason);
  }

  private async run(): Promise<void> {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: this.taskIds }, _meta: envelope() },
    });
    const acked = setTimeout(
      () => this.end(`no acknowledgement within ${this.config.connectTimeoutMs} ms`),
      this.config.connectTimeoutMs,
    );
    try {
      const response = await this.fetchImpl(this.config.url ?? '', {
        method: 'POST',
        headers: {
          ...this.config.headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': STATELESS_PROTOCOL_VERSION,
          'mcp-method': encodeHeaderValue('subscriptions/listen'),
        },
        body,
        signal: this.abort.signal,
      });
      const type = response.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream') || !response.body) {
        const text = await response.text().catch(() => '');
        throw new Error(`listen refused: HTTP ${response.status} ${refusal(text)}`);
      }
      const reader = response.body.getReader();
      try {
        for await (const message of sseMessages(reader)) {
          if (this.message(message) === 'acknowledged') clearTimeout(acked);
        }
      } finally {
        // A refusal read in the stream leaves it early: let the connection go.
        void reader.cancel().catch(() => undefined);
      }
    } finally {
      clearTimeout(acked);
    }
  }

  /** One SSE event: the acknowledgement, a task notification, or the listen's own answer. */
  private message(message: unknown): 'acknowledged' | undefined {
    if (!isRecord(message) || this.ended) return undefined;
    const params = isRecord(message.params) ? message.params : {};
    if (message.method === 'notifications/subscriptions/acknowledged') {
      const filter = isRecord(params.notifications) ? params.notifications : {};
      const ids = Array.isArray(filter.taskIds) ? filter.taskIds : [];
      this.handlers.onAcknowledged(ids.filter((id): id is string => typeof id === 'string'));
      return 'acknowledged';
    }
    if (message.method === 'notifications/tasks' && typeof params.taskId === 'string') {
      this.handlers.onTask(params.taskId);
    } else if ('id' in message && isRecord(message.error)) {
      throw new Error(
        `listen refused: ${String(message.error.code)} ${String(message.error.message)}`,
      );
    }
    return undefined;
  }
}

function refusal(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (parsed.error) return `${String(parsed.error.code)} ${String(parsed.error.message)}`;
  } catch {
    // not JSON: the status says enough
  }
  return '';
}
