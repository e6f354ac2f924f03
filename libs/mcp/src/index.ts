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
  StatelessSession,
  SupervisorState,
  UpstreamPort,
  UpstreamSession,
} from './upstream.port';
export {
  UpstreamConnectionError,
  UpstreamDeadlineError,
  UpstreamRequestBrokenError,
  UpstreamError,
  UpstreamHttpError,
  UpstreamProtocolError,
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './upstream.errors';
export {
  STATELESS_PROTOCOL_VERSION,
  StatelessHttpClient,
  TASKS_EXTENSION,
  encodeHeaderValue,
} from './stateless-http.client';
