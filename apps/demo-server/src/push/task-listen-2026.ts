import { isRecord } from '@app/common';
import { META_SUBSCRIPTION_ID, invalidParams, tasksExtensionRequired } from '@app/wire';
import { TASKS_EXTENSION, type Request2026 } from '@app/wire';
import { detailedTask } from '../mcp-2026/task-2026.presenter';
import { isTerminal2026 } from '../mcp-2026/task-2026-timeline.util';
import type { Task2026Store } from '../mcp-2026/task-2026.store';
import type { TaskRecord2026 } from '../mcp-2026/task-2026.types';
import type { ListenSink } from './listen-sink';
import { TaskChangeTimers, firstAfter } from './task-change.timers';

/** How many task IDs one listen may name: enough for a poller's whole share of a server. */
const MAX_LISTEN_TASK_IDS = 100_000;

interface Listener {
  id: string | number;
  taskIds: ReadonlySet<string>;
  sink: ListenSink;
}

/**
 * Push on the 2026 side: `subscriptions/listen` with `notifications.taskIds` opens a stream (an
 * SSE answer over HTTP, lines on stdout over stdio: listen-sink.ts) that starts with
 * `notifications/subscriptions/acknowledged` (the IDs of tasks this server knows) and then
 * carries a `notifications/tasks` (the full DetailedTask, without `resultType`) each time one of
 * those tasks changes: at each instant its timeline moves, and at once after an answer or a
 * cancel. Every message carries the subscription ID (the listen's JSON-RPC id). The stream stays
 * open until the client ends it (closes the stream, or cancels the listen over stdio) or the
 * server stops.
 */
export class TaskListen2026 {
  private readonly listeners = new Set<Listener>();
  private readonly byTask = new Map<string, Set<Listener>>();
  private readonly timers = new TaskChangeTimers();

  constructor(private readonly tasks: Task2026Store) {}

  /** A task was made, answered or cancelled: (re)arm its change timer and report the change. */
  touched(task: TaskRecord2026, created: boolean): void {
    if (created) {
      this.timers.watch(
        task.taskId,
        (now) => nextChange(task, now),
        () => this.changed(task),
      );
    } else {
      this.timers.touch(task.taskId);
    }
  }

  /** Serves one `subscriptions/listen` (already validated as a 2026-07-28 request). */
  listen(request: Request2026, sink: ListenSink): void {
    if (!request.declaresTasks) {
      throw tasksExtensionRequired(
        `subscriptions/listen with taskIds needs the ${TASKS_EXTENSION} extension declared`,
      );
    }
    const filter = request.params.notifications;
    const asked = isRecord(filter) ? filter.taskIds : undefined;
    if (!Array.isArray(asked) || !asked.every((id) => typeof id === 'string')) {
      throw invalidParams('params.notifications.taskIds must be an array of task IDs');
    }
    if (asked.length > MAX_LISTEN_TASK_IDS) {
      throw invalidParams(`params.notifications.taskIds names more than ${MAX_LISTEN_TASK_IDS}`);
    }
    const known = asked.filter((id) => this.tasks.get(id) !== undefined);
    const listener: Listener = { id: request.id, taskIds: new Set(known), sink };
    sink.open();
    this.send(listener, 'notifications/subscriptions/acknowledged', {
      notifications: { taskIds: known },
    });
    this.listeners.add(listener);
    for (const id of known) {
      let set = this.byTask.get(id);
      if (!set) this.byTask.set(id, (set = new Set()));
      set.add(listener);
    }
    sink.onDropped(() => this.drop(listener));
  }

  /** Ends every stream (server shutdown): a client sees its subscription end. */
  close(): void {
    this.timers.close();
    for (const listener of [...this.listeners]) {
      this.drop(listener);
      listener.sink.end();
    }
  }

  private changed(task: TaskRecord2026): void {
    const phase = this.tasks.phase(task);
    if (isTerminal2026(phase.status)) this.timers.forget(task.taskId);
    const listeners = this.byTask.get(task.taskId);
    if (!listeners || listeners.size === 0) return;
    const { resultType: _omitted, ...detail } = detailedTask(task, phase);
    for (const listener of listeners) this.send(listener, 'notifications/tasks', detail);
  }

  private send(listener: Listener, method: string, params: Record<string, unknown>): void {
    const message = {
      jsonrpc: '2.0',
      method,
      params: { _meta: { [META_SUBSCRIPTION_ID]: listener.id }, ...params },
    };
    listener.sink.send(message);
  }

  private drop(listener: Listener): void {
    this.listeners.delete(listener);
    for (const id of listener.taskIds) {
      const set = this.byTask.get(id);
      set?.delete(listener);
      if (set?.size === 0) this.byTask.delete(id);
    }
  }
}

/**
 * When the task's status next moves by itself: its questions asked, or its end. A task that
 * mirrors a 2025-side job moves on that job's timeline; a listen acknowledges only tasks it
 * reports, and a client trusts it not to poll them meanwhile (found when a 2026 client waited
 * for its slow safety poll to see a mirrored task complete).
 */
function nextChange(task: TaskRecord2026, now: number): number | undefined {
  if (task.plan.external) return task.plan.external.nextChange(now);
  const keys = Object.keys(task.plan.questions ?? {});
  const askAt = task.createdAt + task.plan.workMs;
  if (task.cancelledAt !== undefined) return undefined;
  if (keys.length === 0) return firstAfter(now, [askAt]);
  if (keys.some((key) => !task.answers.has(key))) return firstAfter(now, [askAt]);
  let last = task.createdAt;
  for (const { at } of task.answers.values()) last = Math.max(last, at);
  return firstAfter(now, [last + task.plan.resumeMs]);
}
