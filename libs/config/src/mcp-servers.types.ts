import { Contract, McpExposure } from '@app/common';

export type TransportKind = 'stdio' | 'http' | 'sse';

/**
 * The MCP revisions whose task design the `mcp-tasks` contract speaks: 2025-11-25 (tasks in core,
 * SEP-1686, over an initialized session) and 2026-07-28 (the tasks extension, SEP-2663, stateless).
 */
export const TASK_PROTOCOL_VERSIONS = ['2025-11-25', '2026-07-28'] as const;
export type TaskProtocolVersion = (typeof TASK_PROTOCOL_VERSIONS)[number];

/** OAuth client credentials for servers that require them (SDK auth provider). */
export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
  scope?: string;
}

/**
 * `maxMessageBytes` when a server does not set it: 8 MiB, room for a result with a few images
 * inline. A poller's 16 calls in flight to one server (`maxConcurrentCalls`) then hold at most
 * 128 MiB of answer bytes, a quarter of its 512 MiB limit (k8s/base/poller-deployment.yaml).
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

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
  /**
   * Calls in flight to this server across the whole fleet (every poller together), counted from
   * the live leases in the claim (docs/leases.md, "Fleet-wide caps"). Unset: no fleet-wide cap.
   */
  fleetMaxConcurrentCalls?: number;
  keepaliveIntervalMs: number;
  /**
   * The longest message read from this server (a JSON answer, one SSE event, one stdio line), in
   * bytes; a longer one is refused as it streams in (docs/connections.md, "Message size").
   */
  maxMessageBytes: number;
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
  /**
   * Pins the task design instead of discovering it (`server/discover`). 2026-07-28 needs the
   * Streamable HTTP or the stdio transport; undefined means discover (`server/discover` is asked
   * of a stdio server only once it refused a session).
   */
  protocolVersion?: TaskProtocolVersion;
  toolsets: ToolsetConfig[];
}

interface ToolsetBase {
  name: string;
  server: string;
  /** Repeating a submit that may have reached the upstream is declared safe by the operator. */
  retryOnCrash: boolean;
  /**
   * How the toolset shows on the MCP front door (`/mcp`). The validator always sets it; it is
   * optional so toolsets built by hand (tests) get the defaults.
   */
  mcp?: McpExposure;
  /**
   * Each task's maximum lifetime from submit, in seconds; past it the gateway cancels the
   * upstream work and ends the task `failed` / `deadline_exceeded` (docs/contracts.md,
   * "Deadlines"). Undefined: no deadline.
   */
  deadlineSeconds?: number;
}

export interface OrdinaryToolset extends ToolsetBase {
  contract: Contract.Ordinary;
  submitTool: string;
  statusTool: string;
  cancelTool: string;
  /**
   * Optional tool that takes a consumer's answers to an `input_required` question, called with
   * `{task_id, responses}`; without it the contract cannot be answered through the gateway.
   */
  inputTool?: string;
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
