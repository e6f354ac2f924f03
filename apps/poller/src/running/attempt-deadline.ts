import { AttemptDeadlineError } from '@app/common';
import {
  attemptChains,
  attemptMarginMs,
  chainMs,
  type ServerConfig,
  type ToolsetConfig,
} from '@app/config';

/** What the deadline arithmetic needs from a claim: its database times and when it was sent. */
export interface ClaimTimes {
  /** The claim statement's `now()`. */
  dbNow: Date;
  /** The lease's end as the claim set it; null only for a row that was not leased. */
  leaseExpiresAt: Date | null;
  /** This process's clock when the claim statement was sent. */
  claimSentAtMs: number;
}

/**
 * The lease's end on this process's clock. Lease arithmetic uses the database's clock only: the
 * lease's remaining length is `leaseExpiresAt - dbNow`, both from the claim statement, and it is
 * counted from the moment the claim was sent. The statement's `now()` came after that moment, so
 * the result is never later than the lease's real end, whatever the pod's clock says.
 */
export function localLeaseEndMs(claim: ClaimTimes): number {
  const remaining =
    (claim.leaseExpiresAt?.getTime() ?? claim.dbNow.getTime()) - claim.dbNow.getTime();
  return claim.claimSentAtMs + Math.max(0, remaining);
}

/** The one deadline of an attempt: the margin before its lease's end, on this process's clock. */
export function attemptDeadlineMs(claim: ClaimTimes, leaseMs: number): number {
  return localLeaseEndMs(claim) - attemptMarginMs(leaseMs);
}

/**
 * The least time an attempt must still have before its deadline to send a submit
 * (docs/leases.md, "Time to send a submit"): what the submit's connects and calls may take with
 * the server's timeouts, or half the attempt's time when that is less. A submit the deadline
 * cuts may have been processed, so it ends `outcome_uncertain`; one never sent is simply sent
 * by the next claim. The half keeps a submit whose mark landed promptly always sent, however
 * tightly the timeouts fill the lease. A held call (`sync-call`) has no deadline but its lease,
 * which its guard first renews a third of the lease after the call starts: the half, so that
 * renewal comes while the lease holds.
 */
export function sendFloorMs(
  server: Pick<
    ServerConfig,
    'transport' | 'protocolVersion' | 'connectTimeoutMs' | 'callTimeoutMs'
  >,
  toolset: ToolsetConfig,
  leaseMs: number,
): number {
  const half = (leaseMs - attemptMarginMs(leaseMs)) / 2;
  const submit = attemptChains(server, toolset)?.submit;
  return submit ? Math.min(chainMs(server, submit), half) : half;
}

/**
 * An attempt's signal: the poller's own abort (`parent`: lease lost, cancel, shutdown) or the
 * attempt's deadline, whichever comes first. The drivers and the connection layer bound every
 * connect and call by it, so a chain of steps cannot outlive the lease. `dispose` clears the
 * timer once the attempt is over.
 */
export class AttemptDeadline {
  readonly signal: AbortSignal;
  private readonly timer: NodeJS.Timeout;
  private readonly controller = new AbortController();

  constructor(parent: AbortSignal, deadlineMs: number, now = Date.now()) {
    const budgetMs = Math.max(0, deadlineMs - now);
    this.timer = setTimeout(
      () => this.controller.abort(new AttemptDeadlineError(budgetMs)),
      budgetMs,
    );
    this.signal = AbortSignal.any([parent, this.controller.signal]);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
