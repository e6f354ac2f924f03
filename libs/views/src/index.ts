export { toTaskSummary, toTaskView, taskRowFromSnapshot } from './task.projection';
export type {
  TaskErrorView,
  TaskSummaryView,
  TaskView,
  ProjectionContext,
} from './task.projection';
export {
  ERROR_TEMPLATES,
  TransientClass,
  consumerError,
  consumerLastError,
  scrubUpstreamText,
  transientClass,
} from './error-text.projection';
