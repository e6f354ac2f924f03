export type { Settings } from './settings';
export {
  DEAD_AFTER_HEARTBEATS,
  deadAfterMs,
  parseSettings,
  loadSettings,
  resetSettingsCache,
} from './settings.loader';
export type {
  TransportKind,
  OAuthClientCredentials,
  ServerConfig,
  OrdinaryToolset,
  McpTasksToolset,
  SyncCallToolset,
  ToolsetConfig,
  McpServersConfig,
  TaskProtocolVersion,
} from './mcp-servers.types';
export { TASK_PROTOCOL_VERSIONS } from './mcp-servers.types';
export { loadMcpServersFile, parseMcpServers } from './mcp-servers.loader';
export { runMain, requireDatabaseUrl } from './boot';
export { attemptChains, attemptMarginMs, chainMs, checkAttemptChains } from './attempt-chains';
export type { Chain, ChainPhase } from './attempt-chains';
