import { ClaimBackoff } from './claim-backoff';
import { Capacity, EngineLog, LeasedWork } from './leased-work';
import { WakeSignal } from './wake-signal';

export interface LeasedWorkEngineOptions<T> {
  /** Names the work in log lines (`tasks`, `webhooks`). */
  name: string;
  work: LeasedWork<T>;
  capacity: Capacity<T>;
  /** Claim at least this often even with no wake-up (a lost NOTIFY costs at most this). */
  fallbackIntervalMs: number;
  /**
   * The least time from one claim statement's start to the next, unless the last claim was full
   * (a backlog is claimed at once). Wake-ups within it are gathered into one claim, so rows that
   * fall due one by one are claimed together (leases.md, "Wake-ups"). 0: no gap.
   */
  minClaimGapMs?: number;
  log: EngineLog;
  backoff?: ClaimBackoff;
  /** Local clock, for tests; only decides when to ask the database. */
  now?: () => number;
}

/**
 * The least wait before claiming again after a claim that met a concurrent claim's locks, when
 * `minClaimGapMs` is shorter (0 turns the gap off): long enough for that claim to commit, so a
 * retry does not spin on its locks while it runs (a claim of 500 takes tens of ms).
 */
const CONTENDED_RETRY_MIN_MS = 10;
/**
 * Retries in a row after contended claims before waiting for a wake-up as after any short
 * claim: a lock held for long (an operator's open transaction) must not become a claim every gap.
 */
const CONTENDED_RETRIES = 5;

interface InFlight<T> {
  item: T;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The poller's one leased-work engine (leases.md, "The claim engine"): claims as many rows as
 * its capacity rule has room for, starts each at once on its own, and claims again when
 * something may be due: a poke (NOTIFY, a freed slot while rows were left behind), the earliest
 * due time it knows (its items' next polls, and the earliest due row in the table, which
 * includes every lease that will expire), or the fallback interval. Claim errors back off.
 * There is no tick barrier: nothing waits for a batch.
 *
 * Items are keyed by their claim (lease token). Shutdown is {@link stopClaiming}, then
 * {@link drain} under a deadline, {@link abort} of what may be repeated, and the owner's
 * release of the rest.
 */
export class LeasedWorkEngine<T> {
  private readonly inflight = new Map<string, InFlight<T>>();
  private readonly wake: WakeSignal;
  private readonly settled: WakeSignal;
  private readonly backoff: ClaimBackoff;
  private readonly now: () => number;
  private stopping = false;
  private claiming = false;
  private loopDone?: Promise<void>;
  /** A claim could find work: set by every wake-up, cleared when a claim starts. */
  private dueMaybe = true;
  /** The last claim left due rows behind for lack of room: claim again when room frees. */
  private leftBehind = false;
  /** When the last claim statement started (local epoch ms). */
  private lastClaimAt = -Infinity;
  /** The last claim was full: the next one does not wait out the gap. */
  private backlog = false;
  /** The last claim met a concurrent claim's locks: the next waits at least the retry gap. */
  private contended = false;
  /** Claims in a row that met a concurrent claim's locks (bounded by CONTENDED_RETRIES). */
  private contendedRun = 0;

  constructor(private readonly options: LeasedWorkEngineOptions<T>) {
    this.now = options.now ?? Date.now;
    this.wake = new WakeSignal(this.now);
    this.settled = new WakeSignal(this.now);
    this.backoff = options.backoff ?? new ClaimBackoff();
  }

  /** True from {@link start} until {@link stopClaiming} (readiness). */
  get isClaiming(): boolean {
    return this.claiming;
  }

  /** Starts claiming. Idempotent; no-op once stopped. */
  start(): void {
    if (this.loopDone || this.stopping) return;
    this.claiming = true;
    this.loopDone = this.loop();
  }

  /** Something may be due now (a NOTIFY, a reconnect). */
  poke(): void {
    this.dueMaybe = true;
    this.wake.poke();
  }

  /** Stops claiming; resolves once no claim statement runs. In-flight items go on. */
  async stopClaiming(): Promise<void> {
    this.stopping = true;
    this.claiming = false;
    this.wake.poke();
    await this.loopDone;
  }

  /**
   * Resolves true once every in-flight item (or every one `which` selects) has settled, or
   * false at local epoch ms `untilMs` (Infinity: as long as they run).
   */
  async drain(untilMs: number, which: (item: T) => boolean = () => true): Promise<boolean> {
    for (;;) {
      if (this.inFlight(which).length === 0) return true;
      const left = untilMs - this.now();
      if (left <= 0) return false;
      await this.settled.wait(left);
    }
  }

  /** Aborts the in-flight items `which` selects, with `reason` as the abort reason. */
  abort(which: (item: T) => boolean, reason: unknown): void {
    for (const entry of this.inflight.values()) {
      if (which(entry.item)) entry.controller.abort(reason);
    }
  }

  /** The items in flight (or those `which` selects). */
  inFlight(which: (item: T) => boolean = () => true): T[] {
    return [...this.inflight.values()].map((entry) => entry.item).filter(which);
  }

  private async loop(): Promise<void> {
    const { capacity, work, log, name } = this.options;
    while (!this.stopping) {
      if (this.dueMaybe && capacity.claimable() > 0) {
        const gap = this.options.minClaimGapMs ?? 0;
        const gapEndsAt =
          this.lastClaimAt + (this.contended ? Math.max(gap, CONTENDED_RETRY_MIN_MS) : gap);
        if (!this.backlog && this.now() < gapEndsAt) {
          // A wake-up within the gap: claim at its end, with whatever else fell due meanwhile.
          await this.wake.wait(gapEndsAt - this.now());
          continue;
        }
        // Cleared before the statement, so a poke arriving during it is not lost.
        this.dueMaybe = false;
        this.lastClaimAt = this.now();
        try {
          const next = await this.claimOnce();
          this.backoff.succeeded();
          this.backlog = next === 'now';
          this.contended = next === 'afterGap';
          if (next !== 'wait') {
            // 'now' claims at once; 'afterGap' waits out the gap at the top of the loop.
            this.dueMaybe = true;
            continue;
          }
          // Asked from when the claim began, so a row that fell due while it ran is not missed.
          const dueInMs = await work.earliestDueMs?.(this.now() - this.lastClaimAt);
          if (dueInMs !== undefined && dueInMs !== null) this.wake.wakeAt(this.now() + dueInMs);
        } catch (error) {
          const retryInMs = this.backoff.failed();
          log.warn({ err: error, work: name, retryInMs }, 'claim failed');
          this.dueMaybe = true;
          await this.sleepUntil(this.now() + retryInMs);
          continue;
        }
      }
      if (this.stopping) break;
      await this.wake.wait(this.options.fallbackIntervalMs);
      // Every wake-up (a poke, a due time, the fallback) means a claim may find work.
      this.dueMaybe = true;
    }
  }

  /** A backoff: only stopping ends it early (pokes would turn an outage into a claim storm). */
  private async sleepUntil(atMs: number): Promise<void> {
    while (!this.stopping && this.now() < atMs) await this.wake.wait(atMs - this.now());
  }

  /**
   * One claim statement, and when to claim next: `now` when more may be due for this worker at
   * once, `afterGap` when a concurrent claim held rows this one would have taken, `wait` for a
   * wake-up otherwise.
   */
  private async claimOnce(): Promise<'now' | 'afterGap' | 'wait'> {
    const { capacity, work } = this.options;
    const limit = capacity.claimable();
    const batch = await work.claim(limit);
    const full = batch.items.length >= limit;
    this.leftBehind = full || batch.leftBehind === true;
    for (const item of batch.items) this.startItem(item);
    this.contendedRun = batch.contended === true ? this.contendedRun + 1 : 0;
    if (full || (batch.again === true && capacity.claimable() > 0)) return 'now';
    const retry = this.contendedRun > 0 && this.contendedRun <= CONTENDED_RETRIES;
    return retry && capacity.claimable() > 0 ? 'afterGap' : 'wait';
  }

  private startItem(item: T): void {
    const { capacity, work, log, name } = this.options;
    if (!capacity.acquire(item)) {
      this.leftBehind = true;
      work.giveBack?.(item).catch((error: unknown) => {
        log.warn({ err: error, work: name }, 'could not give back a claimed row');
      });
      return;
    }
    const key = work.key(item);
    const controller = new AbortController();
    const done = work
      .run(item, controller)
      .catch((error: unknown) => {
        log.warn({ err: error, work: name }, 'an item run rejected');
        return undefined;
      })
      .then((nextDueInMs) => this.settle(key, item, nextDueInMs));
    this.inflight.set(key, { item, controller, done });
  }

  /** An item settled: free its room, and claim again if rows may be waiting for that room. */
  private settle(key: string, item: T, nextDueInMs: number | undefined): void {
    this.inflight.delete(key);
    this.options.capacity.release(item);
    this.settled.poke();
    if (this.stopping) return;
    if (this.leftBehind || this.dueMaybe || nextDueInMs === 0) {
      this.poke();
    } else if (nextDueInMs !== undefined) {
      this.wake.wakeAt(this.now() + nextDueInMs);
    }
  }
}
