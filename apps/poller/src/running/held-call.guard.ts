import { LeaseLostError } from '@app/common';
import type { TaskLease, TaskLeaseRepository } from '@app/persistence';
import type { Logger } from 'pino';
import { ItemAbort } from './item-abort';
import type { ItemScope } from './item-scope';
import {
  HANDLE_WRITE_MAX_PAUSE_MS,
  HANDLE_WRITE_MIN_PAUSE_MS,
  isRetryLogged,
} from './until-landed';

/**
 * This worker's held calls, and the `cancel` NOTIFYs they must not miss. A notice that arrives
 * after a row was claimed but before its call's guard is registered finds no guard to wake; the
 * cancel would then wait for the guard's first renewal, lease/3 (20 s with the default lease). So
 * a guard registered after a notice that came since its row's claim was sent checks at once: a
 * cancel committed before that claim's snapshot is in the claim itself, one committed after it
 * notifies after the send (docs/leases.md, "Timeouts").
 */
export class HeldCalls {
  private readonly guards = new Set<HeldCallGuard>();
  private lastNoticeMs = Number.NEGATIVE_INFINITY;

  /** A `cancel` NOTIFY: every held call checks for its cancel request now. */
  cancelNoticed(): void {
    this.lastNoticeMs = Date.now();
    for (const guard of this.guards) void guard.checkNow();
  }

  /** Registers a started guard of a row whose claim was sent at `claimSentAtMs` (ClaimedTask). */
  add(guard: HeldCallGuard, claimSentAtMs: number): void {
    this.guards.add(guard);
    if (this.lastNoticeMs >= claimSentAtMs) void guard.checkNow();
  }

  delete(guard: HeldCallGuard): void {
    this.guards.delete(guard);
  }
}

/**
 * Keeps a held sync call's claim alive: renews every lease/3 (so two renewals may fail before
 * the lease runs out), and aborts the call when the lease is lost (another worker may already
 * hold the row) or when the renewal reports a cancel request. A renewal the database could not
 * serve is tried again soon, backing off from 250 ms to 2 s (at most lease/3), so that the claim
 * is renewed within seconds of the database's return. A lease that ran out meanwhile is renewed
 * still if the row's token is ours, nobody having claimed it since: the renewal is fenced by the
 * token alone (docs/leases.md, "A call's end"). `checkNow` lets a `cancel` NOTIFY cut the wait
 * to milliseconds ({@link HeldCalls}); the renewal alone bounds it to lease/3.
 */
export class HeldCallGuard {
  private timer?: NodeJS.Timeout;
  private retry?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private failures = 0;
  private pauseMs = 0;
  private ranOut = false;
  /** The lease's end on this clock, never later than the database's (KeptLease's rule). */
  private endsAtMs: number;
  private readonly controller: AbortController;
  private readonly log: Logger;

  /** @param scope the attempt's controller, log and lease end on this clock. */
  constructor(
    private readonly leases: Pick<TaskLeaseRepository, 'renewWatchingCancel'>,
    private readonly lease: TaskLease,
    private readonly leaseMs: number,
    scope: Pick<ItemScope, 'controller' | 'log' | 'leaseExpiresAtMs'>,
  ) {
    this.controller = scope.controller;
    this.log = scope.log;
    this.endsAtMs = scope.leaseExpiresAtMs;
  }

  start(): void {
    this.timer = setInterval(() => void this.checkNow(), Math.max(50, this.leaseMs / 3));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.retry);
    this.timer = undefined;
    await this.checking;
  }

  /** One renewal now (coalesced with one already running). */
  checkNow(): Promise<void> {
    if (this.controller.signal.aborted) return Promise.resolve();
    this.checking ??= this.renew().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async renew(): Promise<void> {
    const sentAtMs = Date.now();
    try {
      const outcome = await this.leases.renewWatchingCancel(this.lease, this.leaseMs);
      if (this.ranOut) {
        this.log.warn('renewed the lease after it expired: no other claim took the row meanwhile');
      }
      this.endsAtMs = sentAtMs + this.leaseMs;
      this.failures = 0;
      this.pauseMs = 0;
      this.ranOut = false;
      if (outcome !== 'renewed') this.abort('cancel', outcome === 'deadline_cancel');
    } catch (error) {
      if (error instanceof LeaseLostError) this.abort('lease_lost');
      else this.failed(error);
    }
  }

  /** A renewal the database could not serve: tried again soon, the call going on meanwhile. */
  private failed(error: unknown): void {
    this.failures += 1;
    if (isRetryLogged(this.failures)) {
      this.log.warn({ err: error, attempt: this.failures }, 'lease renewal failed; retrying');
    }
    if (!this.ranOut && Date.now() >= this.endsAtMs) {
      this.ranOut = true;
      this.log.warn(
        "the held call's lease ran out while the database was unavailable; " +
          'renewing it under its token once the database is back',
      );
    }
    if (this.timer === undefined) return;
    const cap = Math.min(HANDLE_WRITE_MAX_PAUSE_MS, this.leaseMs / 3);
    this.pauseMs = Math.min(Math.max(this.pauseMs * 2, HANDLE_WRITE_MIN_PAUSE_MS), cap);
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.checkNow(), this.pauseMs);
  }

  /** `forDeadline`: the row's `cancel_reason` says the deadline sweep asked for the cancel. */
  private abort(kind: 'cancel' | 'lease_lost', forDeadline = false): void {
    clearInterval(this.timer);
    this.log.info({ reason: kind }, 'aborting the held call');
    this.controller.abort(new ItemAbort(kind, forDeadline));
  }
}
