/**
 * Names and codes of MCP 2026-07-28 and the tasks extension (SEP-2663), as docs/demo-server.md
 * lists them. One file so the handler, the validator and the tools cannot drift apart.
 */
export const PROTOCOL_2026 = '2026-07-28';
export const SUPPORTED_2026_VERSIONS = [PROTOCOL_2026];
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

export const SERVER_INFO = { name: 'mcp-task-gateway-demo-server', version: '0.1.0' };

/** JSON-RPC error codes the 2026 side answers with. */
export const ErrorCode2026 = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** The data of -32021: what the client must declare to be served. */
export const TASKS_REQUIRED_DATA = {
  requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
};
