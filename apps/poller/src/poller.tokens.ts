/** Injection tokens of the poller. */
export const MCP_SERVERS = Symbol('MCP_SERVERS');
/** This process's worker ID (string): WORKER_ID or host-pid-random. */
export const WORKER_ID = Symbol('WORKER_ID');
/** The connection layer (`UpstreamPort`); only the poller constructs it. */
export const UPSTREAM_PORT = Symbol('UPSTREAM_PORT');
