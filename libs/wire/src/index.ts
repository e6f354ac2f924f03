export {
  PROTOCOL_2026,
  SUPPORTED_2026_VERSIONS,
  TASKS_EXTENSION,
  META_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_SERVER_INFO,
  META_SUBSCRIPTION_ID,
  ErrorCode2026,
} from './wire.constants';
export {
  JsonRpcWireError,
  invalidParams,
  methodNotFound,
  tasksExtensionRequired,
} from './json-rpc-wire.error';
export type { Request2026 } from './request-2026.validator';
export {
  isStatelessRequest,
  encodeHeaderValue,
  validateRequest2026,
} from './request-2026.validator';
