import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isRecord } from '@app/common';
import { META_SUBSCRIPTION_ID } from '@app/wire';
import { describe } from '../failure.classifier';
import { envelope } from './envelope';
import type { TaskListen, TaskListenHandlers } from '../upstream.port';

/** The subscription a message of a listen stream belongs to: the listen's JSON-RPC ID. */
export function subscriptionOf(message: Record<string, unknown>): unknown {
  const params = isRecord(message.params) ? message.params : {};
  return isRecord(params._meta) ? params._meta[META_SUBSCRIPTION_ID] : undefined;
}

/**
 * `subscriptions/listen` with `notifications.taskIds` over stdio (docs/connections.md, "Push"):
 * the request is a line to the child, and what the server sends for it, the acknowledgement and
 * then `notifications/tasks`, comes as lines stamped with the listen's ID among the answers to
 * other requests (StatelessStdioClient routes them here). The acknowledgement must come within
 * `ackTimeoutMs`; after that the subscription has no deadline. The client ends it with
 * `notifications/cancelled` for the listen's ID, as closing the stream ends it over HTTP; the
 * server ends it by answering the listen (a graceful end, or a refusal), and the child's exit
 * ends it too. Each end but close() is reported once through `onEnd`.
 */
export class StdioTaskListen implements TaskListen {
  private ended = false;
  private child?: Transport;
  private readonly acked: NodeJS.Timeout;

  constructor(
    readonly id: number,
    ackTimeoutMs: number,
    private readonly handlers: TaskListenHandlers,
    /** Removes it from the client's routing, once it has ended. */
    private readonly forget: () => void,
  ) {
    this.acked = setTimeout(
      () => this.end(`no acknowledgement within ${ackTimeoutMs} ms`, true),
      ackTimeoutMs,
    );
  }

  /** Sends the listen to the child that will carry it. */
  send(child: Transport, taskIds: readonly string[]): void {
    if (this.ended) return;
    this.child = child;
    const params = { notifications: { taskIds }, _meta: envelope() };
    const message = { jsonrpc: '2.0', id: this.id, method: 'subscriptions/listen', params };
    child.send(message as JSONRPCMessage).catch((error: unknown) => this.end(describe(error)));
  }

  /** A notification stamped with this listen's ID. */
  notified(message: Record<string, unknown>): void {
    if (this.ended) return;
    const params = isRecord(message.params) ? message.params : {};
    if (message.method === 'notifications/subscriptions/acknowledged') {
      clearTimeout(this.acked);
      const filter = isRecord(params.notifications) ? params.notifications : {};
      const ids = Array.isArray(filter.taskIds) ? filter.taskIds : [];
      this.handlers.onAcknowledged(ids.filter((id): id is string => typeof id === 'string'));
    } else if (message.method === 'notifications/tasks' && typeof params.taskId === 'string') {
      this.handlers.onTask(params.taskId);
    }
  }

  /** The server answered the listen: a refusal, or the end of the subscription. */
  answered(message: Record<string, unknown>): void {
    const { error } = message;
    this.end(
      isRecord(error)
        ? `listen refused: ${String(error.code)} ${String(error.message)}`
        : 'the server ended the subscription',
    );
  }

  /** Its child exited, or could not be started. */
  lost(reason: string): void {
    this.end(reason);
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.acked);
    this.forget();
    this.cancel('closed by the client');
  }

  private end(reason: string, cancel = false): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.acked);
    this.forget();
    if (cancel) this.cancel(reason);
    this.handlers.onEnd(reason);
  }

  private cancel(reason: string): void {
    const notice = { jsonrpc: '2.0', method: 'notifications/cancelled' };
    this.child
      ?.send({ ...notice, params: { requestId: this.id, reason } } as JSONRPCMessage)
      .catch(() => undefined);
  }
}
