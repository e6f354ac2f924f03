import { Inject, Injectable } from '@nestjs/common';
import type { Response } from 'express';
import { setTimeout as delay } from 'node:timers/promises';
import { isTerminal } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskRow } from '@app/persistence';
import {
  META_SUBSCRIPTION_ID,
  TASKS_EXTENSION,
  invalidParams,
  isRecord,
  tasksExtensionRequired,
} from '@app/mcp-wire';
import { Call2026 } from './mcp-2026.handler';
import { McpTaskAccess } from './mcp-task-access.service';
import { detailedTask } from './mcp-task.view';

const MAX_TASK_IDS = 100;
const CHECK_MS = 250;

/**
 * `subscriptions/listen` with `notifications.taskIds` (2026-07-28): an SSE stream that starts
 * with `notifications/subscriptions/acknowledged` (the caller's tasks among those asked; another
 * user's ID is dropped like one that never existed), then one `notifications/tasks` carrying the
 * full `DetailedTask` each time a task's event sequence moves (the counter the event outbox
 * stamps on every event, so a notification follows each event webhooks and SSE see). The stream
 * ends with the listen request's success response once every task has ended, or at
 * MCP_MAX_HOLD_MS; the client ends it by closing the connection.
 */
@Injectable()
export class TaskSubscriptions {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly access: McpTaskAccess,
  ) {}

  /** Checks the request; throws a JSON-RPC error before any byte of the stream is sent. */
  async open(call: Call2026): Promise<TaskRow[]> {
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
      asked.some((id) => typeof id !== 'string')
    ) {
      throw invalidParams(`notifications.taskIds must be up to ${MAX_TASK_IDS} task IDs`);
    }
    const rows = await Promise.all(
      [...new Set(asked as string[])].map((id) => this.access.find(call.principal.userId, id)),
    );
    return rows.filter((row): row is TaskRow => row !== null);
  }

  async stream(call: Call2026, tasks: TaskRow[], res: Response): Promise<void> {
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
    const sent = new Map<string, number>();
    const deadline = Date.now() + this.settings.mcp.maxHoldMs;
    let current = tasks;
    for (;;) {
      for (const row of current) {
        if (sent.get(row.id) === row.eventSeq) continue;
        sent.set(row.id, row.eventSeq);
        // detailedTask carries no resultType: a notification is the task, as tasks/get shows it.
        const task = detailedTask(row, this.access.timing);
        send({ method: 'notifications/tasks', params: { _meta: subscription, ...task } });
      }
      if (current.every((row) => isTerminal(row.status)) || Date.now() >= deadline) break;
      try {
        await delay(CHECK_MS, undefined, { signal: call.abort });
      } catch {
        return; // the client closed the stream
      }
      const fresh = await Promise.all(
        current.map((row) => this.access.find(call.principal.userId, row.id)),
      );
      current = fresh.map((row, i) => row ?? current[i]);
    }
    send({ id: call.id, result: { resultType: 'complete', _meta: subscription } });
    res.end();
  }
}
