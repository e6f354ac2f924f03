import { ErrorCode2026 } from './wire-2026.constants';

/**
 * A JSON-RPC error answer of the 2026 side, with the HTTP status Streamable HTTP wants for it:
 * 400 for the header, capability and version errors (the spec says MUST), 404 for an unknown
 * method, 200 for the rest (the spec leaves those open; FastMCP also answers 200).
 */
export class JsonRpc2026Error extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

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

  toJson(): { code: number; message: string; data?: unknown } {
    return {
      code: this.code,
      message: this.message,
      ...(this.data === undefined ? {} : { data: this.data }),
    };
  }
}

export const invalidParams = (message: string): JsonRpc2026Error =>
  new JsonRpc2026Error(ErrorCode2026.InvalidParams, message);
