/**
 * How a toolset's MCP tool may run as a task on the front door (docs/mcp.md): `forbidden` never
 * returns a task, `optional` returns one when the client can take it, `required` only runs as a
 * task.
 */
export type McpTaskMode = 'forbidden' | 'optional' | 'required';

/** A toolset's exposure on the MCP front door, as configured per toolset (`"mcp": {…}`). */
export interface McpExposure {
  /** Whether the toolset is a tool of `/mcp` at all. */
  expose: boolean;
  /** The MCP tool name; defaults to the toolset name. */
  toolName: string;
  taskMode: McpTaskMode;
  /** Whether the companion tools (start, get, answer, cancel, list) are offered for it. */
  companionTools: boolean;
  /**
   * What a client giving up on a held call (`notifications/cancelled`, or closing the
   * connection) ends: `hold`, only the wait (the task runs on, for whoever collects it), or
   * `task`, the wait and the task (a durable cancel). Absent in catalogs published before it
   * existed, which reads as `hold`.
   */
  clientCancel?: McpClientCancel;
}

/** What a client's cancel of a held call ends (docs/mcp.md, "Held calls"). */
export type McpClientCancel = 'hold' | 'task';

export const MCP_CLIENT_CANCELS: readonly McpClientCancel[] = ['hold', 'task'];

export const MCP_TASK_MODES: readonly McpTaskMode[] = ['forbidden', 'optional', 'required'];

/** MCP tool names as the 2025-11-25 specification recommends them. */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** The exposure of a toolset whose config says nothing (defaults). */
export function defaultMcpExposure(toolset: string): McpExposure {
  return {
    expose: true,
    toolName: toolset,
    taskMode: 'optional',
    companionTools: false,
    clientCancel: 'hold',
  };
}

/**
 * The shared companion tools' names (docs/mcp.md, "Companion tools"), reserved on `/mcp`: no
 * toolset's tool may take one.
 */
export const COMPANION_TOOL_NAMES = {
  get: 'gateway_task_get',
  answer: 'gateway_task_answer',
  cancel: 'gateway_task_cancel',
  list: 'gateway_task_list',
} as const;

/** The start tool of a toolset exposed as `toolName`. */
export function companionStartName(toolName: string): string {
  return `${toolName}_start`;
}
