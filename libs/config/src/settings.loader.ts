import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { ConfigError } from '@app/common';
import { EnvSchema } from './env.schema';
import { LauncherSettings, Settings } from './settings';

let cached: Settings | undefined;

/** Missed heartbeats after which a worker is dead (leases.md, "Workers"). */
export const DEAD_AFTER_HEARTBEATS = 3;

/**
 * FAIR_SHARE_HEADROOM when unset (docs/leases.md, "Fair share"): two slots, as few as keep a
 * quiet principal's next task from waiting for one to free beside a flood (docs/benchmarks.md,
 * "Fair share"). A worker of one or two slots keeps fewer, so that it still starts unset.
 */
export const DEFAULT_HEADROOM = 2;

/**
 * The dead-after window of leases.md, "Workers", in its one place: three heartbeat intervals.
 * The claim (pinned rows), the catalog sweep and the status endpoint all read
 * `settings.worker.deadAfterMs`, which is this.
 */
export function deadAfterMs(heartbeatIntervalMs: number): number {
  return heartbeatIntervalMs * DEAD_AFTER_HEARTBEATS;
}

/**
 * Validates the environment into {@link Settings}. Throws a {@link ConfigError} whose message
 * lists every bad variable with its rule; values are never included. DATABASE_URL is required.
 */
export function parseSettings(env: NodeJS.ProcessEnv): Settings {
  const settings = parseLauncherSettings(env);
  const url = settings.database.url;
  if (!url) {
    throw new ConfigError(
      'invalid environment:\n  - DATABASE_URL: is required (npm start sets it for the embedded database)',
    );
  }
  return { ...settings, database: { ...settings.database, url } };
}

/** As {@link parseSettings}, DATABASE_URL optional: `npm start` starts an embedded database without one. */
export function parseLauncherSettings(env: NodeJS.ProcessEnv): LauncherSettings {
  const raw: Record<string, string> = {};
  for (const key of settingNames()) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const dto = plainToInstance(EnvSchema, raw);
  const errors = validateSync(dto, { forbidUnknownValues: true });
  if (errors.length > 0) throw new ConfigError(formatErrors(errors));
  const crossErrors = crossCheck(dto);
  if (crossErrors.length > 0) throw new ConfigError(crossErrors.join('\n'));
  return toSettings(dto);
}

/** Every environment variable the settings read (docs/configuration.md lists each). */
export function settingNames(): string[] {
  return Object.keys(new EnvSchema());
}

/** The process-wide settings, validated on first use and cached. */
export function loadSettings(): Settings {
  cached ??= parseSettings(process.env);
  return cached;
}

/** For tests that change the environment between cases. */
export function resetSettingsCache(): void {
  cached = undefined;
}

function formatErrors(errors: ValidationError[]): string {
  const lines = errors.flatMap((error) => Object.values(error.constraints ?? {}));
  return `invalid environment:\n${lines.map((line) => `  - ${line}`).join('\n')}`;
}

function crossCheck(dto: EnvSchema): string[] {
  const problems: string[] = [];
  if (dto.MIN_POLL_INTERVAL_MS > dto.POLL_INTERVAL_MS) {
    problems.push('MIN_POLL_INTERVAL_MS: must not be greater than POLL_INTERVAL_MS');
  }
  if (dto.BACKOFF_BASE_MS > dto.MAX_BACKOFF_MS) {
    problems.push('BACKOFF_BASE_MS: must not be greater than MAX_BACKOFF_MS');
  }
  if (deadAfterMs(dto.HEARTBEAT_INTERVAL_MS) > dto.LEASE_MS * 10) {
    problems.push(
      `HEARTBEAT_INTERVAL_MS: the dead-after window (${DEAD_AFTER_HEARTBEATS} intervals) must fit in ten leases`,
    );
  }
  if (dto.AUTH_JWKS_URL && dto.AUTH_JWT_SECRET) {
    problems.push('AUTH_JWKS_URL: set either AUTH_JWKS_URL or AUTH_JWT_SECRET, not both');
  }
  // Without both, jose skips the check it was not given: any token signed by the same keys (another
  // service of the same identity provider, another environment) would be accepted.
  if ((dto.AUTH_JWKS_URL || dto.AUTH_JWT_SECRET) && (!dto.AUTH_ISSUER || !dto.AUTH_AUDIENCE)) {
    problems.push(
      'AUTH_ISSUER, AUTH_AUDIENCE: both are required when JWTs are verified (AUTH_JWKS_URL or AUTH_JWT_SECRET is set)',
    );
  }
  if (dto.AUTH_JWT_SECRET !== undefined && dto.AUTH_JWT_SECRET.length < 32) {
    problems.push('AUTH_JWT_SECRET: must be at least 32 characters');
  }
  problems.push(...parseWeights(dto.FAIR_SHARE_WEIGHTS ?? '').problems);
  if (dto.FAIR_SHARE_HEADROOM !== undefined && dto.FAIR_SHARE_HEADROOM >= dto.WORKER_SLOTS) {
    problems.push('FAIR_SHARE_HEADROOM: must be less than WORKER_SLOTS');
  }
  if (dto.MCP_ANONYMOUS_USER !== undefined && dto.NODE_ENV === 'production') {
    problems.push('MCP_ANONYMOUS_USER: must not be set when NODE_ENV is production');
  }
  const linkKeys = commaList(dto.ANSWER_LINK_KEYS);
  if (dto.PUBLIC_BASE_URL !== undefined && linkKeys.length === 0) {
    problems.push(
      'ANSWER_LINK_KEYS: required when PUBLIC_BASE_URL is set (answer links are signed)',
    );
  }
  if (linkKeys.some((key) => key.length < 32)) {
    problems.push('ANSWER_LINK_KEYS: every key must be at least 32 characters');
  }
  return problems.map((line) => `invalid environment:\n  - ${line}`);
}

function toSettings(dto: EnvSchema): LauncherSettings {
  const nodeEnv = dto.NODE_ENV as Settings['nodeEnv'];
  return {
    nodeEnv,
    database: {
      url: dto.DATABASE_URL,
      poolSize: dto.DATABASE_POOL_SIZE,
      connectTimeoutMs: dto.DATABASE_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: dto.DATABASE_STATEMENT_TIMEOUT_MS,
      startupWaitMs: dto.DATABASE_STARTUP_WAIT_MS,
    },
    http: {
      host: dto.HOST,
      port: dto.PORT,
      metricsPort: dto.METRICS_PORT,
      keepAliveTimeoutMs: dto.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    log: {
      level: dto.LOG_LEVEL as Settings['log']['level'],
      format: (dto.LOG_FORMAT ?? (nodeEnv === 'production' ? 'json' : 'pretty')) as
        'json' | 'pretty',
    },
    scheduling: {
      pollIntervalMs: dto.POLL_INTERVAL_MS,
      minPollIntervalMs: dto.MIN_POLL_INTERVAL_MS,
      inputRequiredPollIntervalMs: dto.INPUT_REQUIRED_POLL_INTERVAL_MS,
      push: dto.UPSTREAM_PUSH,
      pushSafetyPollFactor: dto.PUSH_SAFETY_POLL_FACTOR,
      backoffBaseMs: dto.BACKOFF_BASE_MS,
      maxBackoffMs: dto.MAX_BACKOFF_MS,
      trackingDegradedAfter: dto.TRACKING_DEGRADED_AFTER,
      trackingTimeoutMs: dto.TRACKING_TIMEOUT_MS,
      removedToolsetGraceMs: dto.REMOVED_TOOLSET_GRACE_MS,
    },
    lease: { ms: dto.LEASE_MS },
    tracing: { endpoint: dto.OTEL_EXPORTER_OTLP_ENDPOINT },
    worker: {
      id: dto.WORKER_ID,
      slots: dto.WORKER_SLOTS,
      drainTimeoutMs: dto.DRAIN_TIMEOUT_MS,
      heartbeatIntervalMs: dto.HEARTBEAT_INTERVAL_MS,
      deadAfterMs: deadAfterMs(dto.HEARTBEAT_INTERVAL_MS),
      claimFallbackIntervalMs: dto.CLAIM_FALLBACK_INTERVAL_MS,
      backlogSampleIntervalMs: dto.BACKLOG_SAMPLE_INTERVAL_MS,
      claimMinGapMs: dto.CLAIM_MIN_GAP_MS,
      writeBatchWindowMs: dto.WRITE_BATCH_WINDOW_MS,
      writeBatchMax: dto.WRITE_BATCH_MAX,
      fairShare: dto.CLAIM_FAIR_SHARE,
      fairShareWeights: parseWeights(dto.FAIR_SHARE_WEIGHTS ?? '').weights,
      fairShareHeadroom:
        dto.FAIR_SHARE_HEADROOM ?? Math.min(DEFAULT_HEADROOM, dto.WORKER_SLOTS - 1),
    },
    results: { maxBytes: dto.MAX_RESULT_BYTES, previewChars: dto.RESULT_PREVIEW_CHARS },
    retention: { days: dto.RETENTION_DAYS, eventHours: dto.EVENT_RETENTION_HOURS },
    auth: {
      jwksUrl: dto.AUTH_JWKS_URL,
      jwtSecret: dto.AUTH_JWT_SECRET,
      issuer: dto.AUTH_ISSUER,
      audience: dto.AUTH_AUDIENCE,
      tenantClaim: dto.AUTH_TENANT_CLAIM,
      adminUsers: commaList(dto.ADMIN_USERS),
    },
    api: {
      quotas: {
        submitsPerMinute: dto.SUBMIT_RATE_LIMIT_PER_MINUTE,
        maxActiveTasks: dto.MAX_ACTIVE_TASKS_PER_USER,
      },
      apiKeyCacheMs: dto.API_KEY_CACHE_MS,
      submitFastPath: dto.API_SUBMIT_FAST_PATH,
      sse: {
        recheckIntervalMs: dto.SSE_RECHECK_INTERVAL_MS,
        maxAgeMs: dto.SSE_MAX_AGE_MS,
        maxStreamsPerUser: dto.SSE_MAX_STREAMS_PER_USER,
      },
      maxInputResponseBytes: dto.MAX_INPUT_RESPONSE_BYTES,
      shutdownDelayMs: dto.SHUTDOWN_DELAY_MS ?? (nodeEnv === 'production' ? 5000 : 0),
    },
    webhooks: { allowPrivateNetworks: dto.WEBHOOK_ALLOW_PRIVATE_NETWORKS },
    mcp: {
      maxHoldMs: dto.MCP_MAX_HOLD_MS,
      progressIntervalMs: dto.MCP_PROGRESS_INTERVAL_MS,
      maxPerUser: {
        heldCalls: dto.MCP_MAX_HELD_CALLS_PER_USER,
        resultWaits: dto.MCP_MAX_RESULT_WAITS_PER_USER,
        listenStreams: dto.MCP_MAX_LISTEN_STREAMS_PER_USER,
      },
      roundWaitMs: dto.MCP_ROUND_WAIT_MS,
      allowedOrigins: commaList(dto.MCP_ALLOWED_ORIGINS),
      defaultThread: dto.MCP_DEFAULT_THREAD,
      publicUrl: dto.MCP_PUBLIC_URL,
      anonymousUser: dto.MCP_ANONYMOUS_USER,
    },
    console: {
      sessionTtlSeconds: dto.CONSOLE_SESSION_TTL,
      publicBaseUrl: dto.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
      answerLinkKeys: commaList(dto.ANSWER_LINK_KEYS),
      answerLinkTtlSeconds: dto.ANSWER_LINK_TTL,
    },
    mcpServersFile: dto.MCP_SERVERS_FILE,
  };
}

/** A comma-separated list (ADMIN_USERS, MCP_ALLOWED_ORIGINS): trimmed items, empty ones dropped. */
function commaList(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

const MAX_WEIGHT = 1000;

/**
 * FAIR_SHARE_WEIGHTS: `alice=3,acme=0.5`. A weight is a positive number up to 1000; a malformed
 * pair or a principal named twice is refused at boot, naming the pair by its place (values are
 * never echoed).
 */
function parseWeights(text: string): { weights: Map<string, number>; problems: string[] } {
  const weights = new Map<string, number>();
  const problems: string[] = [];
  const pairs = text.split(',').map((part) => part.trim());
  pairs.forEach((pair, index) => {
    if (pair === '') return;
    const at = pair.lastIndexOf('=');
    const principal = at > 0 ? pair.slice(0, at).trim() : '';
    const weight = at > 0 ? Number(pair.slice(at + 1).trim()) : NaN;
    if (principal === '' || !(weight > 0 && weight <= MAX_WEIGHT)) {
      problems.push(
        `FAIR_SHARE_WEIGHTS: pair ${index + 1} must be principal=weight with a weight above 0 and at most ${MAX_WEIGHT}`,
      );
    } else if (weights.has(principal)) {
      problems.push(`FAIR_SHARE_WEIGHTS: pair ${index + 1} names a principal given before`);
    } else {
      weights.set(principal, weight);
    }
  });
  return { weights, problems };
}
