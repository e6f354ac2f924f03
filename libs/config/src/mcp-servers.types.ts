import { Contract } from '@app/common';

export type TransportKind = 'stdio' | 'http' | 'sse';

/** OAuth client credentials for servers that require them (SDK auth provider). */
export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
  scope?: string;
}

/** One upstream server of the `mcpServers` file, validated, with defaults applied. */
export interface ServerConfig {
  name: string;
  transport: TransportKind;
  /** stdio */
  command?: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** http / sse */
  url?: string;
  headers: Record<string, string>;
  oauth?: OAuthClientCredentials;
  connectTimeoutMs: number;
  callTimeoutMs: number;
  maxConcurrentCalls: number;
  keepaliveIntervalMs: number;
  /** Seconds between self-probes once the connect budget is spent. */
  parkedProbeMs: number;
  /** Connect attempts (1 s, doubling, cap 60 s) before the server is parked. */
  connectAttempts: number;
  /**
   * stdio only: every child process of this command sees the same task state (for example, the
   * server keeps its jobs in a shared backend), so any poller may poll an `ordinary` handle.
   * False (the default): handles stay with the poller whose child created them.
   */
  sharedState: boolean;
  toolsets: ToolsetConfig[];
}

interface ToolsetBase {
  name: string;
  server: string;
  /** Repeating a submit that may have reached the upstream is declared safe by the operator. */
  retryOnCrash: boolean;
}

export interface OrdinaryToolset extends ToolsetBase {
  contract: Contract.Ordinary;
  submitTool: string;
  statusTool: string;
  cancelTool: string;
}

export interface McpTasksToolset extends ToolsetBase {
  contract: Contract.McpTasks;
  tool: string;
  /** Requested task TTL in ms (`params.task.ttl`); undefined lets the server choose. */
  ttlMs?: number;
}

export interface SyncCallToolset extends ToolsetBase {
  contract: Contract.SyncCall;
  tool: string;
  /** May be hours: the worker renews its lease while the call runs. */
  callTimeoutMs: number;
}

export type ToolsetConfig = OrdinaryToolset | McpTasksToolset | SyncCallToolset;

export interface McpServersConfig {
  servers: ServerConfig[];
  /** Every toolset of every server, by toolset name. */
  toolsets: Map<string, ToolsetConfig>;
}
