import { randomUUID } from 'node:crypto';
import { isTerminal2026, taskPhase } from './task-2026-timeline.util';
import type { TaskPhase2026, TaskPlan, TaskRecord2026 } from './task-2026.types';

/**
 * The tasks of the 2026 side. The protocol is stateless (every request may be a new
 * connection), so tasks live here, process-wide, not in any session. Like the 2025 side's
 * tasks they are kept in memory only: a restarted server answers -32602 for them, which is how
 * a client's "the upstream lost the task" path is tested. A task expires `ttlMs` after its
 * creation and then reads as not found.
 */
export class Task2026Store {
  private readonly tasks = new Map<string, TaskRecord2026>();
  private readonly lastByTag = new Map<string, string>();
  /** Told of each task made (`created`), answered or cancelled: the push side re-arms its timer. */
  onTouched?: (task: TaskRecord2026, created: boolean) => void;

  constructor(private readonly clock: () => number = Date.now) {}

  now(): number {
    return this.clock();
  }

  /** The id is a random UUID: unguessable, since a task id may act as a bearer handle. */
  create(plan: TaskPlan): TaskRecord2026 {
    // Expired tasks are otherwise dropped only when read; sweep now and then so a long-lived
    // server (npm start) does not keep every task it ever made.
    if (this.tasks.size % 256 === 255) this.sweep();
    const task: TaskRecord2026 = {
      taskId: randomUUID(),
      createdAt: this.clock(),
      plan,
      answers: new Map(),
    };
    this.tasks.set(task.taskId, task);
    if (plan.tag !== undefined) this.lastByTag.set(plan.tag, task.taskId);
    this.onTouched?.(task, true);
    return task;
  }

  private sweep(): void {
    for (const taskId of [...this.tasks.keys()]) this.get(taskId);
  }

  /** Undefined for an unknown or expired task (expired ones are dropped here). */
  get(taskId: string): TaskRecord2026 | undefined {
    const task = this.tasks.get(taskId);
    if (!task) return undefined;
    const { ttlMs } = task.plan;
    if (ttlMs !== null && this.clock() > task.createdAt + ttlMs) {
      this.tasks.delete(taskId);
      return undefined;
    }
    return task;
  }

  phase(task: TaskRecord2026): TaskPhase2026 {
    return taskPhase(task, this.clock());
  }

  /**
   * Takes the answers whose key is still outstanding and ignores the rest (never asked,
   * already answered, or the task is not waiting), as the extension says a server SHOULD.
   */
  answer(
    task: TaskRecord2026,
    responses: Record<string, unknown>,
  ): { accepted: string[]; ignored: string[] } {
    const pending = new Set(this.phase(task).pending ?? []);
    const accepted: string[] = [];
    const ignored: string[] = [];
    const at = this.clock();
    for (const [key, response] of Object.entries(responses)) {
      if (pending.has(key)) {
        task.answers.set(key, { response, at });
        pending.delete(key);
        accepted.push(key);
      } else {
        ignored.push(key);
      }
    }
    if (accepted.length > 0) this.onTouched?.(task, false);
    return { accepted, ignored };
  }

  /** Cooperative and idempotent: a task that already ended keeps its outcome. */
  cancel(task: TaskRecord2026): boolean {
    if (isTerminal2026(this.phase(task).status)) return false;
    task.plan.external?.cancel();
    task.cancelledAt = this.clock();
    this.onTouched?.(task, false);
    return true;
  }

  /** The status of the latest task created with this tag, for demo_stats. */
  statusOfTag(tag: string): string | undefined {
    const id = this.lastByTag.get(tag);
    const task = id === undefined ? undefined : this.tasks.get(id);
    return task ? this.phase(task).status : undefined;
  }
}
