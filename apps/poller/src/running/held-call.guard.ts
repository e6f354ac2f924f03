import { LeaseLostError } from '@app/common';
import type { TaskLease, TaskLeaseRepository } from '@app/persistence';
import type { Logger } from 'pino';
import { ItemAbort } from './item-abort';

/**
 * Keeps a held sync call's claim alive: renews every lease/3 (so two renewals may fail before
 * the lease runs out), and aborts the call when the lease is lost (another worker may already
 * hold the row) or when the renewal reports a cancel request. `checkNow` lets a `cancel`
 * NOTIFY cut the wait to milliseconds; the renewal alone bounds it to lease/3.
 */
export class HeldCallGuard {
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;

  constructor(
    private readonly leases: Pick<TaskLeaseRepository, 'renewWatchingCancel'>,
    private readonly lease: TaskLease,
    private readonly leaseMs: number,
    private readonly controller: AbortController,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.checkNow(), Math.max(50, this.leaseMs / 3));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
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
    try {
      const outcome = await this.leases.renewWatchingCancel(this.lease, this.leaseMs);
      if (outcome === 'renewed') return;
      this.abort('cancel', outcome === 'deadline_cancel');
    } catch (error) {
      if (error instanceof LeaseLostError) {
        this.abort('lease_lost');
        return;
      }
      // A database blip: the lease is still valid for up to 2/3 of its length; the next
      // renewal tries again, and one that finds the lease gone aborts the call.
      this.log.warn({ err: error }, 'lease renewal failed; retrying at the next interval');
    }
  }

  /** `forDeadline`: the row's `cancel_reason` says the deadline sweep asked for the cancel. */
  private abort(kind: 'cancel' | 'lease_lost', forDeadline = false): void {
    clearInterval(this.timer);
    this.log.info({ reason: kind }, 'aborting the held call');
    this.controller.abort(new ItemAbort(kind, forDeadline));
  }
}
