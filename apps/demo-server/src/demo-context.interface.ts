import type { DemoOptions } from './cli-options.parser';
import type { DemoTaskStore } from './demo-task.store';
import type { JobRegistry } from './job.registry';
import type { Task2026Store } from './mcp-2026/task-2026.store';
import type { TaskListen2026 } from './push/task-listen-2026';
import type { TaskPush2025 } from './push/task-push-2025';

/** What every session (and every 2026 request) of one process shares: options, jobs, counters, tasks. */
export interface DemoContext {
  options: DemoOptions;
  registry: JobRegistry;
  taskStore: DemoTaskStore;
  /** Tasks of the 2026-07-28 side (SEP-2663): process-wide, since that protocol has no sessions. */
  tasks2026: Task2026Store;
  /**
   * Push (unless `--no-push`): `subscriptions/listen` on the 2026 side, and
   * `notifications/tasks/status` on the session of a 2025-11-25 task (docs/demo-server.md).
   */
  listen2026?: TaskListen2026;
  push2025?: TaskPush2025;
  /** Set by POST /admin/add-tool so sessions opened later list demo_extra too. */
  extraToolAdded: boolean;
}
