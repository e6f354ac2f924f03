import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { TaskStatus } from '@app/common';
import { PeriodicRun } from '@app/lifecycle';
import { GatewayMetrics } from '@app/metrics';
import { TaskDeadlineRepository } from '@app/persistence';
import { PeriodicJob } from './periodic-job';

/** Rows per statement; a longer backlog of overdue tasks is taken in several, back to back. */
export const DEADLINE_SWEEP_BATCH_ROWS = 500;
// Deadlines are whole seconds: a sweep a second keeps a task's overshoot under about a second
// plus one cancel phase, and an idle sweep is one empty probe of tasks_deadline_idx.
const DEADLINE_SWEEP_INTERVAL_MS = 1000;

/**
 * Enforces the toolsets' `deadlineSeconds` (docs/contracts.md, "Deadlines"): every second, the
 * active tasks past their deadline get a cancel request with the deadline as its reason. A task
 * never submitted ends `failed` / `deadline_exceeded` at once; the others go to the cancel
 * phase, which cancels the upstream work first. Every poller runs it; pollers sweeping at once
 * share the rows (SKIP LOCKED).
 */
@Injectable()
export class DeadlineSweepJob implements PeriodicJob {
  readonly name = 'deadline-sweep';
  private readonly run = new PeriodicRun(() => this.sweep(), DEADLINE_SWEEP_INTERVAL_MS);

  constructor(
    private readonly deadlines: TaskDeadlineRepository,
    private readonly metrics: GatewayMetrics,
    private readonly log: PinoLogger,
  ) {}

  /** Starts sweeping; call once the worker claims. */
  start(): void {
    this.run.start();
  }

  /** Stops and waits for a sweep in progress (before the pool closes). */
  stop(): Promise<void> {
    return this.run.stop();
  }

  private async sweep(): Promise<void> {
    try {
      for (;;) {
        const reached = await this.deadlines.requestOverdueCancels(DEADLINE_SWEEP_BATCH_ROWS);
        const ended = reached.filter((task) => task.status === TaskStatus.Failed);
        // Ended here, by no phase: no runner counts their transition, so the sweep does.
        for (const task of ended) {
          this.metrics.transitions.inc({ toolset: task.toolset, to: TaskStatus.Failed });
        }
        if (reached.length > 0) {
          this.log.warn(
            { tasks: reached.length, endedUnsubmitted: ended.length },
            'tasks past their deadline: cancel requested',
          );
        }
        if (reached.length < DEADLINE_SWEEP_BATCH_ROWS) return;
      }
    } catch (error) {
      this.log.warn({ err: error }, 'deadline sweep failed');
    }
  }
}
