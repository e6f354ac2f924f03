import type { DemoOptions } from './cli-options.parser';
import type { DemoTaskStore } from './demo-task.store';
import type { JobRegistry } from './job.registry';

/** What every session of one process shares: options, jobs and counters, native tasks. */
export interface DemoContext {
  options: DemoOptions;
  registry: JobRegistry;
  taskStore: DemoTaskStore;
  /** Set by POST /admin/add-tool so sessions opened later list demo_extra too. */
  extraToolAdded: boolean;
}
