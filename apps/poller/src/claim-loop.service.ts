import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Phase } from '@app/common';
import { McpServersConfig, Settings } from '@app/config';
import { GatewayMetrics } from '@app/metrics';
import { ClaimedTask, FleetRepository, TaskLeaseRepository } from '@app/persistence';
import { ItemAbort } from './item-abort';
import { MCP_SERVERS, POLLER_SETTINGS, WORKER_ID } from './poller.tokens';
import { ServerSlots } from './server-slots';
import { TaskRunnerService } from './task-runner.service';
import { WakeSignal } from './wake.signal';

const PHASES: readonly Phase[] = [Phase.Submit, Phase.Poll, Phase.Cancel];
// A row claimed for a server that filled up in the meantime goes back due this soon: long enough
// not to bounce straight back to us, short enough that another worker's free slot takes it.
const OVERFLOW_RELEASE_MS = 100;
// Claim errors (database down) back off from 250 ms to 5 s: a restart costs seconds, not minutes.
const CLAIM_ERROR_MIN_MS = 250;
const CLAIM_ERROR_MAX_MS = 5000;

interface Inflight {
  item: ClaimedTask;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The claim loop (leases.md): claims exactly as many rows as can start now, starts each at
 * once on its own, and claims again when a slot frees and more work may be waiting. No tick
 * barrier: nothing waits for a batch. It sleeps until NOTIFY, the earliest known due time,
 * or CLAIM_FALLBACK_INTERVAL_MS, whichever comes first.
 */
@Injectable()
export class ClaimLoopService {
  private readonly inflight = new Map<string, Inflight>();
  private readonly wake = new WakeSignal();
  private stopping = false;
  private loopDone?: Promise<void>;
  /** The last claim may have left due rows behind (it was full, or skipped saturated servers). */
  private starved = true;
  private claiming = false;
  /** `fleetMaxConcurrentCalls` of the servers that set it. */
  private readonly fleetCaps: ReadonlyMap<string, number>;

  constructor(
    @Inject(POLLER_SETTINGS) private readonly settings: Settings,
    @Inject(WORKER_ID) private readonly workerId: string,
    private readonly slots: ServerSlots,
    private readonly fleet: FleetRepository,
    private readonly leases: TaskLeaseRepository,
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
  }

  /** True while the loop runs and claims (readiness). */
  get isClaiming(): boolean {
    return this.claiming;
  }

  start(deadWorkerAfterMs: number): void {
    this.claiming = true;
    this.loopDone = this.loop(deadWorkerAfterMs);
  }

  /** NOTIFY and other wake-ups: something may be due now. */
  poke(): void {
    this.wake.fire(true);
  }

  /** Stops claiming; resolves once no claim statement is running. In-flight items go on. */
  async stopClaiming(): Promise<void> {
    this.stopping = true;
    this.claiming = false;
    this.wake.fire(false);
    await this.loopDone;
  }

  /**
   * Resolves true when every in-flight item (or every one `which` selects) settled, or false at
   * the deadline; without a deadline it waits as long as they run.
   */
  async drain(
    timeoutMs: number,
    which: (item: ClaimedTask) => boolean = () => true,
  ): Promise<boolean> {
    const waited = [...this.inflight.values()].filter((i) => which(i.item));
    const all = Promise.all(waited.map((i) => i.done)).then(() => true);
    if (!Number.isFinite(timeoutMs)) return all;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)),
    );
    const drained = await Promise.race([all, deadline]);
    clearTimeout(timer);
    return drained;
  }

  /** Aborts the in-flight items `which` selects (at shutdown: those safe to repeat). */
  abort(which: (item: ClaimedTask) => boolean): void {
    for (const entry of this.inflight.values()) {
      if (which(entry.item)) entry.controller.abort(new ItemAbort('shutdown'));
    }
  }

  /** The items still in flight (or those `which` selects). */
  remaining(which: (item: ClaimedTask) => boolean = () => true): ClaimedTask[] {
    return [...this.inflight.values()].map((entry) => entry.item).filter(which);
  }

  private async loop(deadWorkerAfterMs: number): Promise<void> {
    let errorDelay = 0;
    let dueInMs: number | null = null;
    while (!this.stopping) {
      if (this.wake.dueMaybe && this.slots.claimable() > 0) {
        // Cleared before the statement, so a NOTIFY arriving during it is not lost.
        this.wake.dueMaybe = false;
        try {
          const full = await this.claimOnce(deadWorkerAfterMs);
          errorDelay = 0;
          if (full) {
            this.wake.dueMaybe = true;
            continue;
          }
          dueInMs = await this.fleet.earliestFutureDueMs();
        } catch (error) {
          errorDelay = Math.min(Math.max(errorDelay * 2, CLAIM_ERROR_MIN_MS), CLAIM_ERROR_MAX_MS);
          this.log.warn({ err: error, retryInMs: errorDelay }, 'claim failed');
          this.wake.dueMaybe = true;
          await this.wake.wait(errorDelay);
          continue;
        }
      }
      if (this.stopping) break;
      const fallback = this.settings.worker.claimFallbackIntervalMs;
      await this.wake.wait(Math.min(dueInMs ?? fallback, fallback));
      dueInMs = null;
    }
  }

  /**
   * One claim statement; true when more may be due for us now: it filled every claimable slot,
   * or it filled a server's room (rows of that server were left and others may lie behind them;
   * the next claim skips the now saturated server).
   */
  private async claimOnce(deadWorkerAfterMs: number): Promise<boolean> {
    const limit = this.slots.claimable();
    const excludeServers = this.slots.saturated();
    const timer = this.metrics.claimDuration.startTimer();
    const claimed = await this.leases.claim({
      workerId: this.workerId,
      limit,
      phases: PHASES,
      leaseMs: this.settings.lease.ms,
      deadWorkerAfterMs,
      excludeServers,
      serverRoom: this.slots.room(),
      fairShare: this.settings.worker.fairShare
        ? { weights: this.settings.worker.fairShareWeights }
        : undefined,
      fleetCaps: this.fleetCaps,
    });
    timer();
    // One count per statement and phase it claimed rows for: an empty claim claimed nothing.
    for (const phase of new Set(claimed.map((item) => item.phase))) {
      this.metrics.claims.inc({ phase });
    }
    this.starved = claimed.length >= limit || excludeServers.length > 0;
    for (const item of claimed) this.startItem(item);
    const filledServer = this.slots.saturated().length > excludeServers.length;
    return claimed.length >= limit || (filledServer && this.slots.claimable() > 0);
  }

  private startItem(item: ClaimedTask): void {
    this.metrics.claimedRows.inc({ phase: item.phase });
    this.metrics.dueLag.observe(Math.max(0, item.dueLagSeconds));
    if (item.rescued) this.metrics.rescued.inc({ phase: item.phase });
    if (!this.slots.tryAcquire(item.server)) {
      this.starved = true;
      this.leases.releaseAfter(item.lease, OVERFLOW_RELEASE_MS).catch((error: unknown) => {
        this.log.warn({ err: error, task_id: item.id }, 'could not give back an overflow row');
      });
      return;
    }
    const controller = new AbortController();
    const done = this.runner
      .run(item, controller)
      .catch(() => ({ nextDueInMs: undefined })) // run() never rejects; this keeps the loop safe if it did
      .then((result) => {
        this.inflight.delete(item.lease.token);
        this.slots.release(item.server);
        this.wake.slotFreed(this.starved, result.nextDueInMs);
      });
    // Keyed by claim, not task: a row claimed again after a lost lease is another item.
    this.inflight.set(item.lease.token, { item, controller, done });
  }
}
