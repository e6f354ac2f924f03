/** How the front door names itself to MCP clients (`serverInfo`). */
export const SERVER_INFO = { name: 'mcp-task-gateway', version: '0.1.0' };
