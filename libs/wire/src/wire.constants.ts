/**
 * Names and codes of MCP 2026-07-28 and its tasks extension (SEP-2663), as docs/mcp.md lists
 * them. Shared by every party that speaks the 2026 wire, so they cannot drift apart.
 */
export const PROTOCOL_2026 = '2026-07-28';
export const SUPPORTED_2026_VERSIONS: readonly string[] = [PROTOCOL_2026];
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** JSON-RPC error codes of the 2026 wire. */
export const ErrorCode2026 = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** The data of -32021 when the tasks extension is what the client must declare. */
export const TASKS_REQUIRED_DATA = {
  requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
};
