import type { IncomingHttpHeaders } from 'node:http';
import { isRecord } from '@app/common';
import { invalidParams, JsonRpcWireError } from './json-rpc-wire.error';
import {
  ErrorCode2026,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  PROTOCOL_2026,
  SUPPORTED_2026_VERSIONS,
  TASKS_EXTENSION,
} from './wire.constants';

/** A 2026-07-28 request that passed the envelope and header checks. */
export interface Request2026 {
  id: string | number;
  method: string;
  params: Record<string, unknown>;
  /** Whether this very request declared the tasks extension (never inferred from others). */
  declaresTasks: boolean;
}

/**
 * Whether a POST belongs to the 2026 side: it names the 2026 protocol in the header or in
 * `_meta`, or asks `server/discover`. `initialize` never does (2026 has no handshake), so a
 * 2025-11-25 client keeps its own path.
 */
export function isStatelessRequest(headers: IncomingHttpHeaders, body: unknown): boolean {
  if (!isRecord(body) || body.method === 'initialize') return false;
  if (body.method === 'server/discover') return true;
  if (headers['mcp-protocol-version'] === PROTOCOL_2026) return true;
  const params = body.params;
  return isRecord(params) && isRecord(params._meta) && META_PROTOCOL_VERSION in params._meta;
}

/** The name-bearing field each method must mirror in `Mcp-Name`. */
function nameField(method: string): 'name' | 'taskId' | undefined {
  if (method === 'tools/call') return 'name';
  if (method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel') {
    return 'taskId';
  }
  return undefined;
}

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/=_-]*)\?=$/;

/** Header values that are not plain ASCII travel as `=?base64?…?=`; this is the decoded text. */
export function decodeHeaderValue(value: string): string {
  const match = SENTINEL.exec(value);
  return match ? Buffer.from(match[1], 'base64').toString('utf8') : value;
}

/** The header form of a value: itself when plain printable ASCII, else the base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  const plain =
    /^[\x20-\x7e]*$/.test(value) && !/^=\?base64\?/i.test(value) && value.trim() === value;
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

const mismatch = (message: string): JsonRpcWireError =>
  new JsonRpcWireError(ErrorCode2026.HeaderMismatch, message);

/**
 * Checks one 2026 request in a fixed order: JSON-RPC shape, `_meta` protocol version, the
 * `MCP-Protocol-Version` header, version support, `Mcp-Method`, the client capabilities, then
 * `Mcp-Name`. Header problems are -32020 (a missing required header included), an unknown
 * version -32022. `Mcp-Name` is required on `tools/call` and on `tasks/get`, `tasks/update` and
 * `tasks/cancel`: the extension binds clients to send it there. `headers` undefined: a transport
 * without a header layer (stdio), where the body is the only signal and no header is checked.
 */
export function validateRequest2026(
  headers: IncomingHttpHeaders | undefined,
  body: unknown,
): Request2026 {
  if (!isRecord(body) || typeof body.method !== 'string' || body.jsonrpc !== '2.0') {
    throw new JsonRpcWireError(
      ErrorCode2026.InvalidRequest,
      'Invalid Request: not a JSON-RPC 2.0 request',
    );
  }
  const id = body.id;
  if (typeof id !== 'string' && typeof id !== 'number') {
    throw new JsonRpcWireError(
      ErrorCode2026.InvalidRequest,
      'Invalid Request: a request needs an id',
    );
  }
  const method = body.method;
  const params = body.params === undefined ? {} : body.params;
  if (!isRecord(params)) throw invalidParams('params must be an object');
  const meta = params._meta;
  const version = isRecord(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  if (typeof version !== 'string') {
    throw invalidParams(`params._meta["${META_PROTOCOL_VERSION}"] is required on every request`);
  }
  const headerVersion = headers ? header(headers, 'mcp-protocol-version') : version;
  if (headerVersion === undefined) throw mismatch('The MCP-Protocol-Version header is required');
  if (headerVersion !== version) {
    throw mismatch(
      `The MCP-Protocol-Version header (${headerVersion}) does not match params._meta protocolVersion (${version})`,
    );
  }
  if (!SUPPORTED_2026_VERSIONS.includes(version)) {
    throw new JsonRpcWireError(
      ErrorCode2026.UnsupportedProtocolVersion,
      `Unsupported protocol version: ${version}`,
      { supported: SUPPORTED_2026_VERSIONS, requested: version },
    );
  }
  const headerMethod = headers ? header(headers, 'mcp-method') : method;
  if (headerMethod === undefined) throw mismatch('The Mcp-Method header is required');
  if (headers && decodeHeaderValue(headerMethod) !== method) {
    throw mismatch(`The Mcp-Method header (${headerMethod}) does not match the method (${method})`);
  }
  const capabilities = (meta as Record<string, unknown>)[META_CLIENT_CAPABILITIES];
  if (!isRecord(capabilities)) {
    throw invalidParams(`params._meta["${META_CLIENT_CAPABILITIES}"] is required on every request`);
  }
  const field = nameField(method);
  if (field !== undefined) {
    if (typeof params[field] !== 'string') throw invalidParams(`params.${field} must be a string`);
  }
  if (field !== undefined && headers) {
    const headerName = header(headers, 'mcp-name');
    if (headerName === undefined) {
      throw mismatch(`The Mcp-Name header is required on ${method} (it carries params.${field})`);
    }
    if (decodeHeaderValue(headerName) !== params[field]) {
      throw mismatch(`The Mcp-Name header does not match params.${field}`);
    }
  }
  const extensions = capabilities.extensions;
  const declaresTasks = isRecord(extensions) && isRecord(extensions[TASKS_EXTENSION]);
  return { id, method, params, declaresTasks };
}
