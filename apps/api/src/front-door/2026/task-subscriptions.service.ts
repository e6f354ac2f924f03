import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { isTerminal, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskRepository, TaskRow } from '@app/persistence';
import {
  META_SUBSCRIPTION_ID,
  TASKS_EXTENSION,
  invalidParams,
  tasksExtensionRequired,
} from '@app/wire';
import { EventStreamHub } from '../../events/event-stream.hub';
import { Call2026 } from './mcp-2026.handler';
import { McpTaskAccess } from '../mcp-task-access.service';
import { detailedTask } from '../mcp-task.view';
import { McpWaitSlots } from '../mcp-wait-slots';

const MAX_TASK_IDS = 100;
/**
 * The longest a stream goes without reading its tasks again: a wake-up (NOTIFY) lost while the
 * LISTEN connection reconnected costs at most this, as on the `/v1` event streams.
 */
const FALLBACK_MS = 5000;

/**
 * `subscriptions/listen` with `notifications.taskIds` (2026-07-28): an SSE stream that starts
 * with `notifications/subscriptions/acknowledged` (the caller's tasks among those asked; another
 * user's ID is dropped like one that never existed), then one `notifications/tasks` carrying the
 * full `DetailedTask` each time a task's event sequence moves (the counter the event outbox
 * stamps on every event, so a notification follows each event webhooks and SSE see). It rides
 * the replica's one LISTEN connection (EventStreamHub): the stream sleeps until the outbox
 * announces news in a thread of its tasks (or FALLBACK_MS passes), then reads all its running
 * tasks in one query. It ends with the listen request's success response once every task has
 * ended, at MCP_MAX_HOLD_MS, or when the API shuts down; the client ends it by closing the
 * connection. At most MCP_MAX_LISTEN_STREAMS_PER_USER at once per user and replica.
 */
@Injectable()
export class TaskSubscriptions {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly access: McpTaskAccess,
    private readonly tasks: TaskRepository,
    private readonly hub: EventStreamHub,
    private readonly slots: McpWaitSlots,
  ) {}

  /** Checks the request (a refusal is a JSON-RPC error before any byte), then streams. */
  async serve(call: Call2026, res: Response): Promise<void> {
    const tasks = await this.open(call);
    const release = this.slots.acquire(call.principal.userId, 'listenStreams', call.abort);
    try {
      await this.stream(call, tasks, res);
    } finally {
      release();
    }
  }

  private async open(call: Call2026): Promise<TaskRow[]> {
    const filter = call.params.notifications;
    const asked = isRecord(filter) ? filter.taskIds : undefined;
    if (asked === undefined) return [];
    if (!call.declaresTasks) {
      throw tasksExtensionRequired(
        `Listening on taskIds needs the ${TASKS_EXTENSION} extension declared`,
      );
    }
    if (
      !Array.isArray(asked) ||
      asked.length > MAX_TASK_IDS ||
      asked.some((id) => typeof id !== 'string' || id.length > 64)
    ) {
      throw invalidParams(`notifications.taskIds must be up to ${MAX_TASK_IDS} task IDs`);
    }
    const ids = [...new Set(asked as string[])];
    const found = new Map(
      (await this.tasks.findManyForUser(call.principal.userId, ids)).map((row) => [row.id, row]),
    );
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  private async stream(call: Call2026, tasks: TaskRow[], res: Response): Promise<void> {
    const userId = call.principal.userId;
    const subscription = { [META_SUBSCRIPTION_ID]: call.id };
    res.status(200).setHeader('Content-Type', 'text/event-stream');
    res.setHeader('Cache-Control', 'no-cache');
    const send = (message: Record<string, unknown>): void => {
      if (!res.writableEnded && !res.destroyed) {
        res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...message })}\n\n`);
      }
    };
    send({
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: subscription, notifications: { taskIds: tasks.map((t) => t.id) } },
    });
    // Ended by the app closing (the hub closes its streams first) or by the client going away.
    let closing = false;
    let wakeNow: () => void = () => undefined;
    const stop = (): void => {
      closing = true;
      wakeNow();
    };
    const unregister = this.hub.register({ close: stop });
    call.abort.addEventListener('abort', stop, { once: true });
    try {
      const sent = new Map<string, number>();
      const deadline = Date.now() + this.settings.mcp.maxHoldMs;
      const current = new Map(tasks.map((row) => [row.id, row]));
      for (;;) {
        for (const row of current.values()) {
          if (sent.get(row.id) === row.eventSeq) continue;
          sent.set(row.id, row.eventSeq);
          // detailedTask carries no resultType: a notification is the task, as tasks/get shows it.
          const task = detailedTask(row, this.access.timing);
          send({ method: 'notifications/tasks', params: { _meta: subscription, ...task } });
        }
        const running = [...current.values()].filter((row) => !isTerminal(row.status));
        const left = deadline - Date.now();
        if (running.length === 0 || left <= 0 || closing) break;
        const threads = [...new Set(running.map((row) => row.threadId))];
        const waits = threads.map((thread) =>
          this.hub.wait(userId, thread, Math.min(FALLBACK_MS, left)),
        );
        wakeNow = () => waits.forEach((wait) => wait.wake());
        await Promise.race(waits.map((wait) => wait.done));
        wakeNow();
        if (closing) break;
        const fresh = await this.tasks.findManyForUser(
          userId,
          running.map((row) => row.id),
        );
        for (const row of fresh) current.set(row.id, row);
      }
      if (call.abort.aborted) return; // the client closed the stream
      send({ id: call.id, result: { resultType: 'complete', _meta: subscription } });
      res.end();
    } finally {
      call.abort.removeEventListener('abort', stop);
      unregister();
    }
  }
}
