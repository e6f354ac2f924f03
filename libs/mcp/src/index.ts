export { UpstreamPool } from './upstream.pool';
export type {
  BackoffSettings,
  UpstreamLogger,
  UpstreamMetricHooks,
  UpstreamPoolOptions,
} from './upstream.hooks';
export type {
  RequestOptions,
  ServerStatus,
  SupervisorState,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';
export {
  UpstreamConnectionError,
  UpstreamError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './upstream.errors';
