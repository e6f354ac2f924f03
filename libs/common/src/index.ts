export { TaskStatus, isTerminal, Contract, Phase, TaskErrorCode } from './task.enums';
export {
  newTaskId,
  randomId,
  TASK_ID_PATTERN,
  THREAD_ID_PATTERN,
  ROUND_HANDLE_PREFIX,
  isRoundHandle,
} from './task-id';
export {
  ERROR_MESSAGE_STORED_CHARS,
  ERROR_MESSAGE_SHOWN_CHARS,
  LAST_ERROR_CHARS,
  JSON_FIELD_MAX_BYTES,
  PROGRESS_MESSAGE_CHARS,
  REMOTE_TASK_ID_MAX_CHARS,
  MAX_POLL_INTERVAL_MS,
  METADATA_MAX_BYTES,
  cutText,
} from './bounds';
export { hasUnstorableText, storableText, unstorableTextProblem } from './storable-text';
export {
  AttemptDeadlineError,
  ConfigError,
  DATABASE_ERROR_PREFIX,
  LeaseLostError,
  PermanentTaskError,
  TransientTaskError,
  isAttemptDeadline,
} from './errors';
export type { TaskProgress, BoundedResult, ResultArtifact, TaskSnapshot } from './snapshot';
export type { McpExposure, McpTaskMode } from './mcp-exposure';
export type { PublishedToolset } from './published-toolset';
export type { RemoteHandle } from './remote-handle';
export {
  COMPANION_TOOL_NAMES,
  MCP_CLIENT_CANCELS,
  MCP_TASK_MODES,
  MCP_TOOL_NAME_PATTERN,
  companionStartName,
  defaultMcpExposure,
} from './mcp-exposure';
export { GATEWAY_VERSION } from './version';
export { isRecord } from './is-record';
