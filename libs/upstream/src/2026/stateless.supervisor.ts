import type { ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import type { BackoffPolicy } from '../backoff.policy';
import { classifyConnectFailure, describe } from '../failure.classifier';
import {
  LEGACY_ERA,
  STATELESS_ERA,
  listsNoSessionVersion,
  speaksStateless,
  reaskDelayMs,
  refusesDiscover,
} from '../protocol-era.rules';
import { MAX_WORK_PROBE_GAP_MS, SupervisorLifecycle } from '../supervisor.lifecycle';
import { readToolCatalog } from '../tool-catalog.reader';
import { UpstreamUnavailableError } from '../upstream.errors';
import type { UpstreamLogger, UpstreamMetricHooks } from '../upstream.hooks';
import type { ServerStatus, StatelessSession } from '../upstream.port';

export interface StatelessSupervisorDeps {
  config: ServerConfig;
  client: StatelessSession;
  logger: UpstreamLogger;
  metrics: UpstreamMetricHooks;
  backoff: BackoffPolicy;
  /** The server was found to speak another era (first found, or after a redeploy). */
  onEra(era: TaskProtocolVersion): void;
  /** A successful discover and tools/list: the catalog may have changed. */
  onToolsChanged(): void;
  /**
   * A server with no `mcp-tasks` toolsets: its session side serves, and this side wakes only when
   * a `server/discover` asked after a refused session lists 2026-07-28 and no session version.
   */
  latent?: boolean;
}

/**
 * The 2026-07-28 side of one HTTP server with `mcp-tasks` toolsets (or pinned, or latent), and
 * the finder of its era (docs/connections.md, "Which side serves"). An attempt is
 * `server/discover` then a stateless `tools/list`; a ready side asks both again after the
 * discover answer's `ttlMs` (bounded), which is its health probe and keepalive. A discover refused
 * (unless pinned to 2026-07-28) means the server speaks 2025-11-25: this side rests, and asks
 * again only when told to (`rediscover`).
 * States, backoff, parking and metrics are the session side's (SupervisorLifecycle).
 */
export class StatelessSupervisor {
  readonly server: string;
  private readonly life: SupervisorLifecycle;
  private found?: TaskProtocolVersion;
  private tools?: Tool[];
  private capabilities?: ServerCapabilities;
  private reaskTimer?: NodeJS.Timeout;
  private lastRediscovery = 0;
  private askingLegacy?: Promise<void>;
  private readonly pinned: boolean;
  private noSessionVersion = false;

  constructor(private readonly deps: StatelessSupervisorDeps) {
    this.server = deps.config.name;
    this.pinned = deps.config.protocolVersion === STATELESS_ERA;
    if (this.pinned) this.found = STATELESS_ERA;
    else if (deps.latent) this.found = LEGACY_ERA; // until a refused session says otherwise
    this.life = new SupervisorLifecycle({
      config: deps.config,
      logger: deps.logger,
      metrics: deps.metrics,
      backoff: deps.backoff,
      side: '2026-07-28',
      attemptOnce: () => this.attemptOnce(),
    });
  }

  /** The era known now: pinned, or found; undefined until the first discover decides. */
  get era(): TaskProtocolVersion | undefined {
    return this.found;
  }

  get state(): ServerStatus['state'] {
    return this.life.state;
  }

  /** While 2026-07-28 serves: the last `server/discover` listed no version a session opens with. */
  get listsNoSessionVersion(): boolean {
    return this.found === STATELESS_ERA && this.noSessionVersion;
  }

  start(): void {
    this.life.start();
  }

  status(): ServerStatus {
    const state = this.life.state;
    return {
      server: this.server,
      state,
      reason: state === 'ready' ? undefined : this.life.reason,
      tools: this.tools,
      capabilities: this.capabilities,
      taskProtocol: this.found,
    };
  }

  /**
   * The era, waiting (at most connectTimeoutMs) for the first discover to decide. Work revives a
   * parked side. An era not known by then is an `UpstreamUnavailableError`: nothing was sent,
   * and the next task asks again.
   */
  async protocol(): Promise<TaskProtocolVersion> {
    if (this.found === LEGACY_ERA) return LEGACY_ERA;
    this.life.probeForWork();
    if (this.found) return this.found;
    await this.life.waitUntil(
      () =>
        this.found !== undefined ||
        this.life.state === 'closed' ||
        (this.life.state === 'parked' && !this.life.attempting),
      this.deps.config.connectTimeoutMs,
    );
    if (this.found) return this.found;
    const why = `finding the protocol: ${this.life.reason ?? 'not answered yet'}`;
    throw new UpstreamUnavailableError(this.server, this.life.state, why);
  }

  /**
   * Something suggests the server changed what it speaks (a redeploy): a 2026-07-28 request was
   * refused as unsupported, or a 2025-11-25 session could not be opened. Asks `server/discover`
   * again; a pinned server is never re-asked about its era. While 2026-07-28 serves, at most once
   * every 5 s (a burst of refused task calls is one re-discovery); while 2025-11-25 serves, one at
   * a time (the session side's own backoff already spaces its failed connects).
   */
  rediscover(why: string): void {
    if (this.pinned || this.life.state === 'closed') return;
    if (this.found === LEGACY_ERA) {
      if (this.askingLegacy || this.life.started) return;
      this.deps.logger.info({ server: this.server, why }, 'upstream protocol asked again');
      this.askingLegacy = this.askWhileLegacy().finally(() => (this.askingLegacy = undefined));
      return;
    }
    if (this.life.attempting || Date.now() - this.lastRediscovery < MAX_WORK_PROBE_GAP_MS) return;
    this.lastRediscovery = Date.now();
    this.deps.logger.info({ server: this.server, why }, 'upstream protocol asked again');
    void this.life.runAttempt();
  }

  async close(): Promise<void> {
    clearTimeout(this.reaskTimer);
    this.life.close();
    await Promise.all([this.life.settled(), this.askingLegacy]);
  }

  /**
   * One attempt. On a ready side it is the periodic re-ask: its failure is a lost side
   * (`keepalive_failed`: reconnect at once, then backoff); otherwise a failed connect attempt.
   */
  private async attemptOnce(): Promise<void> {
    clearTimeout(this.reaskTimer);
    const wasReady = this.life.state === 'ready';
    const { client, config } = this.deps;
    let discovered: Record<string, unknown> | undefined;
    let tools: Tool[];
    try {
      try {
        discovered = await client.request(
          'server/discover',
          {},
          { idempotent: true, timeoutMs: config.connectTimeoutMs },
        );
        if (!this.pinned && !this.wakesOn(discovered)) {
          return this.speaksLegacy(
            this.deps.latent
              ? 'server/discover lists a version a session can be opened with'
              : 'server/discover names neither the tasks extension nor 2026-07-28 alone',
          );
        }
      } catch (error) {
        if (!refusesDiscover(error)) throw error;
        if (!this.pinned) return this.speaksLegacy(`server/discover refused: ${describe(error)}`);
        discovered = undefined; // pinned: tools/list alone proves health
      }
      tools = await readToolCatalog(client);
    } catch (error) {
      if (!this.life.started) return;
      const failure = classifyConnectFailure(error);
      // Called from inside this attempt, `lost` schedules the reconnect after it ends.
      if (wasReady && !failure.permanent) return this.life.lost(failure.reason, 'keepalive_failed');
      return this.life.failed(failure);
    }
    if (!this.life.started) return;
    const noSessionVersion = discovered !== undefined && listsNoSessionVersion(discovered);
    // A change of the versions listed may change whether a session is needed (UpstreamPool).
    const changed = this.found !== STATELESS_ERA || noSessionVersion !== this.noSessionVersion;
    this.noSessionVersion = noSessionVersion;
    const capabilities = discovered?.capabilities as ServerCapabilities | undefined;
    // A re-ask that found what the last one did publishes nothing (a catalog write per 5 s).
    const same =
      JSON.stringify([tools, capabilities]) === JSON.stringify([this.tools, this.capabilities]);
    this.found = STATELESS_ERA;
    this.tools = tools;
    this.capabilities = capabilities;
    this.life.succeeded(`2026-07-28, ${tools.length} tools`);
    const delay = reaskDelayMs([discovered?.ttlMs], config);
    this.reaskTimer = setTimeout(() => void this.life.runAttempt(), delay).unref();
    if (changed) this.deps.onEra(STATELESS_ERA);
    else if (!(wasReady && same)) this.deps.onToolsChanged();
  }

  /** The server speaks 2025-11-25 (only): this side rests and the session side serves. */
  private speaksLegacy(why: string): void {
    if (!this.life.started) return;
    const changed = this.found !== LEGACY_ERA;
    this.found = LEGACY_ERA;
    this.tools = undefined;
    this.capabilities = undefined;
    clearTimeout(this.reaskTimer);
    if (changed) this.deps.logger.info({ server: this.server, why }, 'upstream speaks 2025-11-25');
    this.life.stop(why);
    void this.deps.client.release?.();
    if (changed) this.deps.onEra(LEGACY_ERA);
  }

  /**
   * A discover answer after which this side serves. A latent side needs more than 2026-07-28: a
   * server that also lists a session version keeps its session side (the session failed for
   * another reason).
   */
  private wakesOn(result: Record<string, unknown>): boolean {
    return this.deps.latent ? listsNoSessionVersion(result) : speaksStateless(result);
  }

  /** While the session side serves: one discover; only a 2026-07-28 answer wakes this side. */
  private async askWhileLegacy(): Promise<void> {
    try {
      const result = await this.deps.client.request(
        'server/discover',
        {},
        { idempotent: true, timeoutMs: this.deps.config.connectTimeoutMs },
      );
      if (this.wakesOn(result) && this.life.state !== 'closed') {
        this.life.start('server/discover names the tasks extension or 2026-07-28 alone');
        return;
      }
    } catch {
      // A refusal confirms 2025-11-25; a failure decides nothing. The session side goes on.
    }
    await this.deps.client.release?.(); // a stdio child of its own, asked and not needed
  }
}
