import { ErrorCode2026, TASKS_REQUIRED_DATA } from './wire.constants';

/**
 * A JSON-RPC error answer with the HTTP status Streamable HTTP wants for it on the 2026 wire:
 * 400 for the header, capability and version errors (the specification says MUST) and for an
 * invalid request, 404 for an unknown method, 200 for the rest (left open by the
 * specification).
 */
export class JsonRpcWireError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** The HTTP status to answer this error with. */
  get httpStatus(): number {
    switch (this.code) {
      case ErrorCode2026.HeaderMismatch:
      case ErrorCode2026.MissingRequiredClientCapability:
      case ErrorCode2026.UnsupportedProtocolVersion:
      case ErrorCode2026.InvalidRequest:
        return 400;
      case ErrorCode2026.MethodNotFound:
        return 404;
      default:
        return 200;
    }
  }

  /** The `error` member of the JSON-RPC response. */
  toJson(): { code: number; message: string; data?: unknown } {
    return {
      code: this.code,
      message: this.message,
      ...(this.data === undefined ? {} : { data: this.data }),
    };
  }
}

/** -32602 with a message saying which parameter is wrong. */
export const invalidParams = (message: string): JsonRpcWireError =>
  new JsonRpcWireError(ErrorCode2026.InvalidParams, message);

/** -32601: an unknown method, or a tool that cannot be called the way it was asked. */
export const methodNotFound = (message: string): JsonRpcWireError =>
  new JsonRpcWireError(ErrorCode2026.MethodNotFound, message);

/** -32021 naming the tasks extension as the capability the client must declare. */
export const tasksExtensionRequired = (message: string): JsonRpcWireError =>
  new JsonRpcWireError(ErrorCode2026.MissingRequiredClientCapability, message, TASKS_REQUIRED_DATA);
