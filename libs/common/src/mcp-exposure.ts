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
}

export const MCP_TASK_MODES: readonly McpTaskMode[] = ['forbidden', 'optional', 'required'];

/** MCP tool names as the 2025-11-25 specification recommends them. */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

/** The exposure of a toolset whose config says nothing (defaults). */
export function defaultMcpExposure(toolset: string): McpExposure {
  return { expose: true, toolName: toolset, taskMode: 'optional', companionTools: false };
}
