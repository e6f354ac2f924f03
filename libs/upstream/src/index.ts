export { UpstreamPool } from './upstream.pool';
export type { UpstreamLogger, UpstreamPoolOptions } from './upstream.hooks';
export type {
  RequestOptions,
  ServerStatus,
  StatelessSession,
  SupervisorState,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';
export {
  UpstreamConnectionError,
  UpstreamRequestBrokenError,
  UpstreamError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './upstream.errors';
export { upstreamRetryAfterMs } from './failure.classifier';
export { StatelessHttpClient } from './2026/stateless-http.client';
export { upstreamFetch } from './transport/transport.factory';
export type { TaskListen, TaskListenHandlers } from './upstream.port';
export { pushSessionKey } from './upstream.port';
