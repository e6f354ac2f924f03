import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Phase } from '@app/common';
import { McpServersConfig, SETTINGS, Settings } from '@app/config';
import { ClaimedBatch, LeasedWork, LeasedWorkEngine } from '@app/leasing';
import { GatewayMetrics } from '@app/metrics';
import { ClaimedTask, FleetRepository, TaskLeaseRepository } from '@app/persistence';
import { MCP_SERVERS, WORKER_ID } from '../poller.tokens';
import { ServerSlots } from './server-slots';
import { RescueHold } from './rescue-hold';
import { localLeaseEndMs } from '../running/attempt-deadline';
import { TaskRunnerService } from '../running/task-runner.service';

const PHASES: readonly Phase[] = [Phase.Submit, Phase.Poll, Phase.Cancel];
// A row claimed for a server that filled up in the meantime goes back due this soon: long enough
// not to bounce straight back to us, short enough that another worker's free slot takes it.
const OVERFLOW_RELEASE_MS = 100;

/**
 * Task attempts on the leased-work engine (leases.md, "The claim engine"): the claim is
 * claim.sql.ts bounded by {@link ServerSlots}, the run is one attempt, the earliest due time is
 * the earliest future `next_attempt_at` (an expiring lease is one). The engine itself is
 * reached through {@link engine} by the lifecycle and the health server.
 */
@Injectable()
export class ClaimLoopService implements LeasedWork<ClaimedTask> {
  readonly engine: LeasedWorkEngine<ClaimedTask>;
  private deadWorkerAfterMs = 0;
  /** `fleetMaxConcurrentCalls` of the servers that set it. */
  private readonly fleetCaps: ReadonlyMap<string, number>;
  /** Claims again when the hold ends, so the rescues it kept back wait no longer. */
  private holdEndPoke?: NodeJS.Timeout;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(WORKER_ID) private readonly workerId: string,
    private readonly slots: ServerSlots,
    private readonly fleet: FleetRepository,
    private readonly leases: TaskLeaseRepository,
    /** Leaves leases that ran out in a database outage to their holders a while. */
    private readonly rescueHold: RescueHold,
    private readonly runner: TaskRunnerService,
    private readonly metrics: GatewayMetrics,
    private readonly log: PinoLogger,
    @Inject(MCP_SERVERS) servers: McpServersConfig,
  ) {
    this.fleetCaps = new Map(
      servers.servers.flatMap((s) =>
        s.fleetMaxConcurrentCalls === undefined ? [] : [[s.name, s.fleetMaxConcurrentCalls]],
      ),
    );
    this.engine = new LeasedWorkEngine<ClaimedTask>({
      name: 'tasks',
      work: this,
      capacity: slots,
      fallbackIntervalMs: settings.worker.claimFallbackIntervalMs,
      minClaimGapMs: settings.worker.claimMinGapMs,
      log,
    });
  }

  /** Starts claiming; `deadWorkerAfterMs` is the registry's dead-after window. */
  start(deadWorkerAfterMs: number): void {
    this.deadWorkerAfterMs = deadWorkerAfterMs;
    this.engine.start();
  }

  /**
   * One claim statement. More may be due now when it filled a server's room (rows of that
   * server were left and others may lie behind them; the next claim skips the now saturated
   * server); rows were left behind when it skipped saturated servers, or may have been when a
   * server has a fleet-wide cap, or when the headroom held the leader's rows back. A fair claim
   * that a concurrent claim's locks kept short is `contended`: the engine claims again after the gap.
   */
  async claim(limit: number): Promise<ClaimedBatch<ClaimedTask>> {
    const excludeServers = this.slots.saturated();
    const fair = this.settings.worker.fairShare;
    // The rows open to anyone: the free slots less the headroom, which only principals below
    // the fleet's leader may fill (docs/leases.md, "Fair share"). The due-order claim has none.
    const open = Math.min(
      limit,
      Math.max(0, this.slots.free() - this.settings.worker.fairShareHeadroom),
    );
    const timer = this.metrics.claimDuration.startTimer();
    const sentMs = Date.now();
    const { tasks: items, contended } = await this.leases
      .claimBatch({
        workerId: this.workerId,
        limit,
        phases: PHASES,
        leaseMs: this.settings.lease.ms,
        deadWorkerAfterMs: this.deadWorkerAfterMs,
        excludeServers,
        serverRoom: this.slots.room(),
        fairShare: fair ? { weights: this.settings.worker.fairShareWeights, open } : undefined,
        fleetCaps: this.fleetCaps,
        heldTokens: this.heldPastLease(),
        minRescueAgeMs: this.rescueHold.minRescueAgeMs(sentMs),
      })
      .catch((error: unknown) => {
        this.rescueHold.failed(error);
        throw error;
      });
    timer();
    this.startHoldIfBack(sentMs);
    // One count per statement and phase it claimed rows for: an empty claim claimed nothing.
    for (const phase of new Set(items.map((item) => item.phase))) {
      this.metrics.claims.inc({ phase });
    }
    for (const item of items) {
      this.metrics.claimedRows.inc({ phase: item.phase });
      this.metrics.dueLag.observe(Math.max(0, item.dueLagSeconds));
      if (item.rescued) this.metrics.rescued.inc({ phase: item.phase });
    }
    const filledServer = this.slots.saturatedWith(items) > excludeServers.length;
    // A server at its fleet-wide cap is left behind too, but only another worker's ending call
    // frees room for it: with fleet caps configured, every freed slot claims again (leases.md,
    // "Fleet-wide caps"), else its rows would wait for a lease expiry or the fallback interval.
    // A claim that took all its open places may have held the leader's rows back: they start
    // as slots free (a settle claims again), not at once, which would only find the headroom
    // again. One that took fewer found nothing more it could lock, as a claim that is not full.
    const heldBack = fair && open < limit && items.length >= open;
    const leftBehind = excludeServers.length > 0 || this.fleetCaps.size > 0 || heldBack;
    return { items, again: filledServer, leftBehind, contended };
  }

  /** The first claim to reach the database after an outage starts the rescue hold. */
  private startHoldIfBack(sentMs: number): void {
    const holdMs = this.rescueHold.reached(sentMs);
    if (holdMs === undefined) return;
    this.log.info(
      { holdMs },
      'the database is back: leases that ran out while it was unreachable are left to their ' +
        'holders to renew before this worker rescues them',
    );
    clearTimeout(this.holdEndPoke);
    this.holdEndPoke = setTimeout(() => this.engine.poke(), holdMs);
    this.holdEndPoke.unref();
  }

  /**
   * The leases this process holds that may have expired by the time the claim runs: ours even
   * so, never rescued here (a call outlasting its lease in an outage goes on; docs/leases.md, "A
   * call's end"). A claim's lease on this clock ends no later than in the database, so a lease
   * with more than a third of it left there is live and needs no naming.
   */
  private heldPastLease(): string[] {
    const soon = Date.now() + this.settings.lease.ms / 3;
    return this.engine
      .inFlight((item) => localLeaseEndMs(item) <= soon)
      .map((item) => item.lease.token);
  }

  earliestDueMs(sinceClaimMs: number): Promise<number | null> {
    return this.fleet.earliestDueMs(sinceClaimMs);
  }

  /** Keyed by claim, not task: a row claimed again after a lost lease is another item. */
  key(item: ClaimedTask): string {
    return item.lease.token;
  }

  async run(item: ClaimedTask, controller: AbortController): Promise<number | undefined> {
    return (await this.runner.run(item, controller)).nextDueInMs;
  }

  async giveBack(item: ClaimedTask): Promise<void> {
    await this.leases.releaseAfter(item.lease, OVERFLOW_RELEASE_MS);
  }
}
