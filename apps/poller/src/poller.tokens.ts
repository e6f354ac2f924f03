/** Injection tokens of the poller. */
export const POLLER_SETTINGS = Symbol('POLLER_SETTINGS');
export const MCP_SERVERS = Symbol('MCP_SERVERS');
