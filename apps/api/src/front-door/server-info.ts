import { GATEWAY_VERSION } from '@app/common';

/** How the front door names itself to MCP clients (`serverInfo`). */
export const SERVER_INFO = { name: 'mcp-task-gateway', version: GATEWAY_VERSION };
