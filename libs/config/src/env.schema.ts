import { Transform } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  Min,
} from 'class-validator';

const toInt = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
const toBool = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;

/**
 * Every environment variable the apps read, with its rule and default. Validated once at boot;
 * property names are the variable names so a validation message names the variable.
 */
export class EnvSchema {
  @IsOptional() @IsIn(['production', 'development', 'test']) NODE_ENV: string = 'development';

  @IsOptional()
  @IsUrl({ protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true })
  DATABASE_URL?: string = undefined;
  @Transform(toInt) @IsInt() @Min(1) @Max(200) DATABASE_POOL_SIZE = 10;
  /** How long a statement waits for a pooled connection before it fails (the API: a 503). */
  @Transform(toInt) @IsInt() @Min(100) @Max(600000) DATABASE_CONNECT_TIMEOUT_MS = 10000;
  /**
   * How long a statement waits for its answer on an open connection before it fails and the
   * connection is dropped; the server's statement_timeout too, and the LISTEN connection's
   * liveness check interval (docs/operations.md, "Database failover").
   */
  @Transform(toInt) @IsInt() @Min(100) @Max(600000) DATABASE_STATEMENT_TIMEOUT_MS = 10000;
  /**
   * How long the API and the poller wait at start for a database that refuses or drops their
   * connection (docs/operations.md, "Starting before the database"); 0: they exit at once.
   */
  @Transform(toInt) @IsInt() @Min(0) @Max(3600000) DATABASE_STARTUP_WAIT_MS = 45000;

  @Transform(toInt) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  /**
   * The address the API's port binds. Unset: every interface, IPv4 and IPv6 (a container's port
   * must be reachable from its Service); `npm start` binds 127.0.0.1, since its development key
   * is on disk.
   */
  @IsOptional()
  @Matches(/^[0-9A-Za-z.:-]{1,253}$/, { message: 'HOST: must be an IP address or a host name' })
  HOST?: string = undefined;
  @Transform(toInt) @IsInt() @Min(0) @Max(65535) METRICS_PORT = 9464;
  /**
   * How long the API keeps a client's connection open, idle, after its last answer. Above the
   * 60 s idle timeout of common proxies and load balancers, so that the proxy, not the API, ends
   * an idle connection: Node's own 5 s let a proxy send a request on a connection the API was
   * closing, and the client got a 502 (docs/operations.md, "Proxies in front of the API").
   */
  @Transform(toInt) @IsInt() @Min(1000) @Max(3600000) HTTP_KEEP_ALIVE_TIMEOUT_MS = 65000;
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL = 'info';
  @IsOptional() @IsIn(['json', 'pretty']) LOG_FORMAT?: string = undefined;

  @Transform(toInt) @IsInt() @Min(1) POLL_INTERVAL_MS = 5000;
  @Transform(toInt) @IsInt() @Min(1) MIN_POLL_INTERVAL_MS = 1000;
  @Transform(toInt) @IsInt() @Min(1) INPUT_REQUIRED_POLL_INTERVAL_MS = 30000;
  @Transform(toBool) @IsBoolean() UPSTREAM_PUSH = true;
  @Transform(toInt) @IsInt() @Min(1) @Max(1000) PUSH_SAFETY_POLL_FACTOR = 20;
  @Transform(toInt) @IsInt() @Min(100) LEASE_MS = 60000;
  @Transform(toInt) @IsInt() @Min(1) BACKOFF_BASE_MS = 1000;
  @Transform(toInt) @IsInt() @Min(1) MAX_BACKOFF_MS = 300000;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) WORKER_SLOTS = 64;
  @Transform(toInt) @IsInt() @Min(0) DRAIN_TIMEOUT_MS = 30000;
  @Transform(toInt) @IsInt() @Min(10) HEARTBEAT_INTERVAL_MS = 5000;
  @Transform(toInt) @IsInt() @Min(10) CLAIM_FALLBACK_INTERVAL_MS = 5000;
  /** Backlog gauges' sampling period: one query per sample, never one per scrape. */
  @Transform(toInt) @IsInt() @Min(100) BACKLOG_SAMPLE_INTERVAL_MS = 15000;
  /** Least time between two task claims unless the last was full (docs/leases.md, "Wake-ups"). */
  @Transform(toInt) @IsInt() @Min(0) @Max(1000) CLAIM_MIN_GAP_MS = 20;
  /** Group commit window (docs/leases.md, "Group commit"); 0 writes each write alone. */
  @Transform(toInt) @IsInt() @Min(0) @Max(1000) WRITE_BATCH_WINDOW_MS = 3;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) WRITE_BATCH_MAX = 200;
  /** Share due work across principals by weight in the claim (docs/leases.md, "Fair share"). */
  @Transform(toBool) @IsBoolean() CLAIM_FAIR_SHARE = true;
  /** `principal=weight` pairs, comma-separated; a principal not listed weighs 1. */
  @IsOptional() @IsString() FAIR_SHARE_WEIGHTS?: string = undefined;
  /**
   * A worker's last free slots kept for principals below the fleet's leader (docs/leases.md,
   * "Fair share"); 0: none. Unset: 2, or WORKER_SLOTS - 1 when that is less.
   */
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(9999) FAIR_SHARE_HEADROOM?: number =
    undefined;
  @Transform(toInt) @IsInt() @Min(1) TRACKING_DEGRADED_AFTER = 3;
  @Transform(toInt) @IsInt() @Min(1) TRACKING_TIMEOUT_MS = 86400000;
  @Transform(toInt) @IsInt() @Min(0) REMOVED_TOOLSET_GRACE_MS = 3600000;
  @Transform(toInt) @IsInt() @Min(1024) MAX_RESULT_BYTES = 262144;
  @Transform(toInt) @IsInt() @Min(1) @Max(100000) RESULT_PREVIEW_CHARS = 2000;
  @Transform(toInt) @IsInt() @Min(1) RETENTION_DAYS = 30;
  @Transform(toInt) @IsInt() @Min(1) EVENT_RETENTION_HOURS = 72;

  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false })
  AUTH_JWKS_URL?: string = undefined;
  @IsOptional() @IsString() AUTH_JWT_SECRET?: string = undefined;
  @IsOptional() @IsString() AUTH_ISSUER?: string = undefined;
  @IsOptional() @IsString() AUTH_AUDIENCE?: string = undefined;
  /** The JWT claim naming the caller's tenant, stored on its tasks for fair share. */
  @IsOptional() @Matches(/^[A-Za-z0-9_:./-]{1,128}$/) AUTH_TENANT_CLAIM?: string = undefined;
  /** Comma-separated user IDs allowed on the admin routes (docs/operations.md). */
  @IsOptional() @IsString() ADMIN_USERS?: string = undefined;
  // Submit quotas per user, shared by every API replica through Postgres (docs/api.md, Quotas).
  @Transform(toInt) @IsInt() @Min(0) @Max(1000000) SUBMIT_RATE_LIMIT_PER_MINUTE = 600;
  @Transform(toInt) @IsInt() @Min(0) @Max(10000000) MAX_ACTIVE_TASKS_PER_USER = 10000;
  // A verified API key is remembered this long at most (0 = never); a revoke through the CLI
  // reaches every replica at once by a notification (docs/api.md, "API key cache").
  @Transform(toInt) @IsInt() @Min(0) @Max(60000) API_KEY_CACHE_MS = 10000;
  // The submit route served in front of Express and Nest (docs/benchmarks.md, "API CPU per
  // submit, third pass"); false serves it through Nest, as every other route.
  @Transform(toBool) @IsBoolean() API_SUBMIT_FAST_PATH = true;
  // An event stream re-checks its token this often: at most 60 s may pass between a revoke (or an
  // expiry) and the stream ending.
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) SSE_RECHECK_INTERVAL_MS = 30000;
  @Transform(toInt) @IsInt() @Min(1000) SSE_MAX_AGE_MS = 1800000;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) SSE_MAX_STREAMS_PER_USER = 10;
  // One answer to a task's question (POST …/input, /mcp tasks/update), as compact JSON: the bound
  // of the question it answers (`input_required`, 64 KiB), so no answer outweighs what is asked.
  @Transform(toInt) @IsInt() @Min(1024) @Max(1048576) MAX_INPUT_RESPONSE_BYTES = 65536;
  // After SIGTERM the API answers readiness 503 but keeps serving this long before its port closes
  // (docs/operations.md, "Grace periods"); unset: 5000 in production, else 0.
  @IsOptional() @Transform(toInt) @IsInt() @Min(0) @Max(600000) SHUTDOWN_DELAY_MS?: number =
    undefined;
  @Transform(toBool) @IsBoolean() WEBHOOK_ALLOW_PRIVATE_NETWORKS = false;
  @Transform(toInt) @IsInt() @Min(1000) @Max(3600000) MCP_MAX_HOLD_MS = 45000;
  @Transform(toInt) @IsInt() @Min(100) @Max(60000) MCP_PROGRESS_INTERVAL_MS = 10000;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) MCP_MAX_HELD_CALLS_PER_USER = 32;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) MCP_MAX_RESULT_WAITS_PER_USER = 32;
  @Transform(toInt) @IsInt() @Min(1) @Max(10000) MCP_MAX_LISTEN_STREAMS_PER_USER = 10;
  @Transform(toInt) @IsInt() @Min(0) @Max(600000) MCP_ROUND_WAIT_MS = 10000;
  @IsOptional() @IsString() MCP_ALLOWED_ORIGINS?: string = undefined;
  @IsOptional() @Matches(/^[A-Za-z0-9._:-]{1,128}$/) MCP_DEFAULT_THREAD: string = 'mcp';
  @IsOptional()
  // The resource identifier of RFC 9728: scheme, host and path, no query, fragment or userinfo.
  @IsUrl({
    protocols: ['http', 'https'],
    require_tld: false,
    require_protocol: true,
    allow_query_components: false,
    allow_fragments: false,
    disallow_auth: true,
  })
  MCP_PUBLIC_URL?: string = undefined;
  @IsOptional() @Matches(/^[A-Za-z0-9._:@-]{1,255}$/) MCP_ANONYMOUS_USER?: string = undefined;

  /** OTLP/HTTP collector base URL; tracing is off when unset (docs/operations.md, Traces). */
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string = undefined;

  /**
   * The gateway's public base URL (scheme, host, optional path); set, it turns answer links on
   * (docs/console.md, "Answer links"), and ANSWER_LINK_KEYS is then required.
   */
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_tld: false, require_protocol: true })
  PUBLIC_BASE_URL?: string = undefined;
  /** Comma-separated HMAC keys (32+ characters each): the first signs answer links, all verify. */
  @IsOptional() @IsString() ANSWER_LINK_KEYS?: string = undefined;
  /** Seconds an answer link stays valid after its event was written. */
  @Transform(toInt) @IsInt() @Min(60) @Max(2592000) ANSWER_LINK_TTL = 86400;
  /** Seconds a console session lasts after sign-in (never longer than the JWT it came from). */
  @Transform(toInt) @IsInt() @Min(60) @Max(2592000) CONSOLE_SESSION_TTL = 28800;

  @IsOptional() @IsString() MCP_SERVERS_FILE?: string = undefined;
  @IsOptional() @IsString() WORKER_ID?: string = undefined;
}

/** Variables whose values are secrets: never echoed, not even their length. */
export const SECRET_VARIABLES = new Set(['DATABASE_URL', 'AUTH_JWT_SECRET', 'ANSWER_LINK_KEYS']);
