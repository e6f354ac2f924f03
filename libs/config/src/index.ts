export type { Settings } from './settings';
export {
  deadAfterMs,
  DEFAULT_HEADROOM,
  parseSettings,
  parseLauncherSettings,
  loadSettings,
  settingNames,
} from './settings.loader';
export type {
  ServerConfig,
  OrdinaryToolset,
  McpTasksToolset,
  SyncCallToolset,
  ToolsetConfig,
  McpServersConfig,
  TaskProtocolVersion,
} from './mcp-servers.types';
export { DEFAULT_MAX_MESSAGE_BYTES } from './mcp-servers.types';
export { loadMcpServersFile, parseMcpServers } from './mcp-servers.loader';
export { runMain } from './boot';
export { attemptChains, attemptMarginMs, chainMs } from './attempt-chains';
export { SETTINGS, SettingsModule } from './settings.module';
