export type {
  AnswerOutcome,
  ContractDriver,
  PendingAnswers,
  DriverContext,
  DriverTask,
  ResultLimits,
  SubmitOutcome,
} from './contract-driver';
export { CallAbortedError, protocolError } from './driver.errors';
export { boundResult, boundJsonField, toCompactJson } from './bound-result';
export {
  boundErrorMessage,
  lastErrorText,
  parseProgress,
  pollHintMs,
  remoteIdProblem,
} from './snapshot-fields';
export { classifySubmitError, classifyPollError } from './submit-safety';
export { taskSupportProblem } from './task-support';
export { parseSubmitAnswer, parseStatusAnswer } from './ordinary-answer.parser';
export { parseCreateTaskReply, parseTask, taskSnapshot, resultSnapshot } from './mcp-task.parser';
export type { ParsedTask } from './mcp-task.parser';
export { OrdinaryDriver } from './ordinary.driver';
export { McpTasksDriver } from './mcp-tasks.driver';
export { SyncCallDriver, SYNC_HANDLE_PREFIX } from './sync-call.driver';
export { DriverRegistry } from './driver.registry';
export { CatalogBuilder } from './catalog.builder';
