// The MCP 2026-07-28 request a conforming client sends: the _meta envelope and the routing headers.
import { encodeHeaderValue } from '@app/wire';

export const PROTOCOL_2026 = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface Request2026Options {
  /** Declare the tasks extension in _meta clientCapabilities (default true). */
  declare?: boolean;
  /** The version in _meta and MCP-Protocol-Version (default 2026-07-28). */
  protocolVersion?: string;
  /** The JSON-RPC ID (default: the next of a counter shared by the test file). */
  id?: number;
}

/** A JSON-RPC request body with its 2026-07-28 `_meta` envelope. */
export interface Body2026 {
  jsonrpc: '2.0';
  id: number;
  method: string;
  params: Record<string, unknown>;
}

let nextId = 1;

/**
 * The body and headers of one 2026-07-28 request: `_meta` carries the version, the client and its
 * capabilities (the tasks extension unless `declare` is false); the headers carry the version,
 * `Mcp-Method`, and `Mcp-Name` (the tool's name, or the task ID of `tasks/*`), encoded as the
 * transport requires. Callers add authorization and any header a test tampers with.
 */
export function request2026(
  method: string,
  params: Record<string, unknown> = {},
  options: Request2026Options = {},
): { body: Body2026; headers: Record<string, string> } {
  const version = options.protocolVersion ?? PROTOCOL_2026;
  const capabilities = options.declare === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } };
  const body: Body2026 = {
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method,
    params: {
      ...params,
      _meta: {
        ...(params._meta as Record<string, unknown> | undefined),
        'io.modelcontextprotocol/protocolVersion': version,
        'io.modelcontextprotocol/clientInfo': { name: 'gateway-tests', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': capabilities,
      },
    },
  };
  const name = method === 'tools/call' ? params.name : params.taskId;
  const headers: Record<string, string> = {
    'mcp-protocol-version': version,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': encodeHeaderValue(name) } : {}),
  };
  return { body, headers };
}
