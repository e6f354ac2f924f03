/** The validated settings of one process, nested by concern. Built once from the environment. */
export interface Settings {
  nodeEnv: 'production' | 'development' | 'test';
  /** `url` is required: only `npm start` runs without one ({@link LauncherSettings}). */
  database: {
    url: string;
    poolSize: number;
    connectTimeoutMs: number;
    statementTimeoutMs: number;
    /** DATABASE_STARTUP_WAIT_MS: how long a process waits at start for the database. */
    startupWaitMs: number;
  };
  /** `host` undefined: every interface. */
  http: {
    host?: string;
    port: number;
    metricsPort: number;
    /** HTTP_KEEP_ALIVE_TIMEOUT_MS: an idle client connection's life after its last answer. */
    keepAliveTimeoutMs: number;
  };
  log: {
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    format: 'json' | 'pretty';
  };
  scheduling: {
    pollIntervalMs: number;
    minPollIntervalMs: number;
    inputRequiredPollIntervalMs: number;
    /** Subscribe to upstreams that push task changes (docs/connections.md, "Push"). */
    push: boolean;
    /** While a task's push subscription is live, its poll interval is this many times longer. */
    pushSafetyPollFactor: number;
    backoffBaseMs: number;
    maxBackoffMs: number;
    trackingDegradedAfter: number;
    trackingTimeoutMs: number;
    /** Queued tasks of a toolset configured on no live worker fail after this long. */
    removedToolsetGraceMs: number;
  };
  lease: { ms: number };
  /** OpenTelemetry traces: exported over OTLP/HTTP to `endpoint`; off when it is unset. */
  tracing: { endpoint?: string };
  worker: {
    id?: string;
    slots: number;
    drainTimeoutMs: number;
    heartbeatIntervalMs: number;
    /**
     * The dead-after window: a worker whose heartbeat is older than this is dead (leases.md,
     * "Workers"). Derived from the heartbeat interval by `deadAfterMs`, never written again.
     */
    deadAfterMs: number;
    claimFallbackIntervalMs: number;
    /** How often the backlog gauges are sampled from the database (one query per sample). */
    backlogSampleIntervalMs: number;
    /**
     * The least time between two task claim statements unless the last one was full (docs/
     * leases.md, "Wake-ups"): rows that fall due one by one are claimed together; 0: no gap.
     */
    claimMinGapMs: number;
    /**
     * Group commit (docs/leases.md, "Group commit"): submit marks, handles, poll results,
     * terminal writes and renewals of concurrent items share one statement per kind and window
     * of this many ms; 0 writes each alone.
     */
    writeBatchWindowMs: number;
    /** A batch this large is written without waiting out the window. */
    writeBatchMax: number;
    /** The claim shares due work across principals by weight (docs/leases.md, "Fair share"). */
    fairShare: boolean;
    /** Weight per principal (`coalesce(tenant, user_id)`); 1 when not listed. */
    fairShareWeights: ReadonlyMap<string, number>;
    /**
     * FAIR_SHARE_HEADROOM: a worker's last free slots, which only principals ranked below the
     * fleet's leader may fill (docs/leases.md, "Fair share"); 0: none. Less than `slots`.
     */
    fairShareHeadroom: number;
  };
  results: { maxBytes: number; previewChars: number };
  retention: { days: number; eventHours: number };
  auth: {
    jwksUrl?: string;
    jwtSecret?: string;
    issuer?: string;
    audience?: string;
    /** User IDs (API key users or JWT `sub`s) allowed on the admin routes. */
    adminUsers: readonly string[];
    /**
     * A JWT claim whose string value is the caller's tenant: stored on the tasks it submits, and
     * the principal of fair share (docs/leases.md, "Fair share"). Unset: every user is its own.
     */
    tenantClaim?: string;
  };
  api: {
    /**
     * Submit quotas per user, kept in Postgres so they hold across API replicas; a row of
     * `principal_quotas` (`npm run quotas`) overrides either for one user. 0 = unlimited.
     */
    quotas: { submitsPerMinute: number; maxActiveTasks: number };
    /**
     * How long a verified API key may be served from memory (0 = every request reads it). A revoke
     * by `ApiKeyRepository.revoke` drops it on every replica by a notification; this bounds the
     * rest (a revoke written by hand, a replica whose listener was down).
     */
    apiKeyCacheMs: number;
    /**
     * `POST /v1/threads/{thread_id}/tasks` served by the submit fast path, in front of Express and
     * Nest (the same answers for less CPU: docs/benchmarks.md); false serves it by the Nest route.
     */
    submitFastPath: boolean;
    /** Server-sent event streams: token re-check, maximum age, concurrent streams per user. */
    sse: { recheckIntervalMs: number; maxAgeMs: number; maxStreamsPerUser: number };
    /** The largest one answer to a task's question may be, as compact JSON (docs/api.md). */
    maxInputResponseBytes: number;
    /**
     * After the shutdown signal, readiness answers 503 while everything else is still served for
     * this long, so load balancers stop routing here before the port closes.
     */
    shutdownDelayMs: number;
  };
  webhooks: { allowPrivateNetworks: boolean };
  mcp: {
    /**
     * The longest a `tools/call` without a task (or `tasks/result`, or a listen stream) is held
     * open before answering; below the 60 s an SDK client waits by default.
     */
    maxHoldMs: number;
    /** How often a held call whose request carries a `progressToken` sends progress. */
    progressIntervalMs: number;
    /**
     * Per user and replica: the most held calls, `tasks/result` waits and `subscriptions/listen`
     * streams open at once; one more is refused (-32029) until one ends.
     */
    maxPerUser: { heldCalls: number; resultWaits: number; listenStreams: number };
    /**
     * How long a task-creating `tools/call` (2026-07-28) waits for the upstream's first answer,
     * so that questions asked before a task exists go back as a multi-round-trip round; 0 answers
     * with the task at once.
     */
    roundWaitMs: number;
    /** Browser origins allowed besides loopback ones (DNS-rebinding protection). */
    allowedOrigins: string[];
    /** The thread of tasks created over MCP when the request names none. */
    defaultThread: string;
    /** The public URL of `/mcp`, for the protected-resource metadata (else from the request). */
    publicUrl?: string;
    /**
     * Local testing only (refused in production): `/mcp` requests without an Authorization
     * header act as this user, for clients that cannot send one (the conformance suite).
     */
    anonymousUser?: string;
  };
  /**
   * The browser console and answer links (docs/console.md). `publicBaseUrl` unset: no answer
   * links (the field is absent from events). `answerLinkKeys[0]` signs, every key verifies.
   */
  console: {
    sessionTtlSeconds: number;
    publicBaseUrl?: string;
    answerLinkKeys: readonly string[];
    answerLinkTtlSeconds: number;
  };
  mcpServersFile?: string;
}

/** What `npm start` reads: every setting, DATABASE_URL optional (it starts an embedded database). */
export type LauncherSettings = Omit<Settings, 'database'> & {
  database: Omit<Settings['database'], 'url'> & { url?: string };
};
