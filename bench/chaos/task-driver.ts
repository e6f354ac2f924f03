import { GatewayClient } from './gateway-client';
import { PlannedTask } from './task-plan';

/** What the driver did with one planned task. */
export interface DrivenTask {
  plan: PlannedTask;
  thread: string;
  taskId?: string;
  /** Why the submit did not produce a task (a violation: the API must accept every one). */
  submitError?: string;
  /** 202 (request recorded), 409 (already terminal), or an error text. */
  cancelAnswer?: number | string;
}

// Bounds the driver's own concurrency: a burst of plan entries must not turn into hundreds of
// open sockets while a Postgres restart makes every request wait.
const MAX_IN_FLIGHT = 24;

/**
 * Submits the plan through the API on schedule (each task at its `submitAtMs`) and asks to
 * cancel the tasks whose script says so. Threads spread the tasks over ten conversations.
 */
export class TaskDriver {
  readonly tasks: DrivenTask[];
  private readonly pending = new Set<Promise<void>>();

  constructor(
    plan: PlannedTask[],
    private readonly client: GatewayClient,
    seed: number,
  ) {
    this.tasks = plan.map((task, i) => ({ plan: task, thread: `chaos-${seed}-t${i % 10}` }));
  }

  async run(startedAt: number): Promise<void> {
    for (const task of this.tasks) {
      await waitUntilTime(startedAt + task.plan.submitAtMs);
      while (this.pending.size >= MAX_IN_FLIGHT) await Promise.race(this.pending);
      const work = this.drive(task).finally(() => this.pending.delete(work));
      this.pending.add(work);
    }
    await Promise.all(this.pending);
  }

  private async drive(task: DrivenTask): Promise<void> {
    const { plan } = task;
    try {
      const answer = await this.client.submit(task.thread, plan.tag, plan.toolset.name, plan.args);
      if (answer.status !== 201 && answer.status !== 200) {
        task.submitError = `HTTP ${answer.status}: ${JSON.stringify(answer.body)}`;
        return;
      }
      task.taskId = String(answer.body?.task_id);
    } catch (error) {
      task.submitError = String(error);
      return;
    }
    if (plan.cancelAfterMs === undefined) return;
    await waitUntilTime(Date.now() + plan.cancelAfterMs);
    try {
      const answer = await this.client.cancel(task.thread, task.taskId);
      task.cancelAnswer = answer.status;
    } catch (error) {
      task.cancelAnswer = String(error);
    }
  }
}

/** The driver's clock: resolves at a scheduled instant (deciding WHEN to act). */
function waitUntilTime(at: number): Promise<void> {
  const ms = at - Date.now();
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
