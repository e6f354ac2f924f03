import type { ClaimedTask } from '@app/persistence';

/**
 * The attempts that hold an upstream call a repeat could duplicate: a submit (from its durable
 * mark on), a held `sync-call`, the `tools/call` of a multi-round-trip call retried with its
 * answers. Each attempt says so itself when it starts such a call, whatever phase its claim
 * had: a sync call released "not sent" is held again from a poll-phase claim, and a round's
 * retry runs from one too. A draining poller keeps these and aborts the rest (docs/leases.md,
 * "Held calls at shutdown"). Keyed by claim (the lease token), as the claim engine keys items.
 */
export class UnrepeatableCalls {
  private readonly claims = new Set<string>();

  /**
   * Called before the first durable write of such a call, synchronously, so a drain that looks
   * afterwards keeps the attempt. An attempt the poller aborted already starts nothing: it
   * throws `notStarted()` then, before anything is written or sent.
   */
  begin(item: ClaimedTask, signal: AbortSignal, notStarted: () => Error): void {
    if (signal.aborted) throw notStarted();
    this.claims.add(item.lease.token);
  }

  /** The attempt ended. */
  end(item: ClaimedTask): void {
    this.claims.delete(item.lease.token);
  }

  /** Whether the attempt holds a call that must not be aborted at shutdown. */
  holds(item: ClaimedTask): boolean {
    return this.claims.has(item.lease.token);
  }
}
