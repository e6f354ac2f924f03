export {
  toTaskSummary,
  toTaskView,
  taskRowFromSnapshot,
  inputRequiredView,
  acceptsAnswers,
} from './task.projection';
export type {
  InputRequiredView,
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
