export { toTaskSummary, toTaskView, taskRowFromSnapshot } from './task.projection';
export type {
  TaskErrorView,
  TaskSummaryView,
  TaskView,
  ProjectionContext,
} from './task.projection';
