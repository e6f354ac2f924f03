export {
  toTaskSummary,
  toTaskView,
  taskRowFromSnapshot,
  inputRequiredView,
  acceptsAnswers,
} from './task.projection';
export type { InputRequiredView, TaskSummaryView, TaskView } from './task.projection';
export {
  ERROR_TEMPLATES,
  TransientClass,
  consumerError,
  scrubUpstreamText,
  transientClass,
} from './error-text.projection';
export { EVENT_TYPES, publicEventId, toEventView } from './event.projection';
export type { EventProjectionContext } from './event.projection';
