import { isDatabaseUnavailable } from '@app/persistence';

/**
 * The hold on rescues after a database outage (docs/leases.md, "Rescues after an outage"). While
 * the database is unreachable no holder can renew its leases, so a lease may run out under a
 * worker that is alive and still working the row (a held call, an answer waiting to be stored).
 * Once this worker's claims reach the database again, its rescues leave such leases alone for
 * `holdMs`, time for their holders, whose retries back off for at most a third of the lease, to
 * renew them; a lease that had run out before this worker last reached the database is rescued
 * as ever.
 *
 * Durations only: the claim is told how long ago, by this worker's clock, it last reached the
 * database, and the database subtracts that from its own `now()`, so a pod's clock that is off
 * does not move the bound.
 */
export class RescueHold {
  /** When the last claim or heartbeat that reached the database was sent (local epoch ms). */
  private lastReachedMs: number;
  /** The last send time that reached the database before claims failed for want of it. */
  private cutOffSinceMs?: number;
  /** When the hold ends, once claims reach the database again; unset while they still fail. */
  private holdUntilMs?: number;

  constructor(
    private readonly holdMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastReachedMs = now();
  }

  /**
   * The least age, in ms, of an expired lease that a claim sent now may rescue: 0 but after an
   * outage, until the hold has run out.
   */
  minRescueAgeMs(sentMs: number): number {
    this.endIfOver(sentMs);
    if (this.cutOffSinceMs === undefined) return 0;
    return Math.max(0, sentMs - this.cutOffSinceMs);
  }

  /**
   * A claim sent at `sentMs` reached the database. Returns the hold's length in ms when this is
   * the first claim to do so after an outage (the hold starts now), else undefined.
   */
  reached(sentMs: number): number | undefined {
    this.sawDatabase(sentMs);
    if (this.cutOffSinceMs === undefined || this.holdUntilMs !== undefined) return undefined;
    this.holdUntilMs = this.now() + this.holdMs;
    return this.holdMs;
  }

  /**
   * A statement sent at `sentMs` (a heartbeat) reached the database: what the next outage's hold
   * spares starts from here. It starts no hold; only a claim that reaches the database does.
   */
  sawDatabase(sentMs: number): void {
    this.lastReachedMs = Math.max(this.lastReachedMs, sentMs);
  }

  /**
   * A claim or a heartbeat failed: an unreachable database starts the hold, which begins once a
   * claim reaches it again (a failure during a hold starts it over).
   */
  failed(error: unknown): void {
    if (!isDatabaseUnavailable(error)) return;
    // A hold that ran out with no claim since (every slot busy) is over: the new outage's bound
    // starts from when the database was last reached, not from the old outage.
    this.endIfOver(this.now());
    this.cutOffSinceMs ??= this.lastReachedMs;
    this.holdUntilMs = undefined;
  }

  private endIfOver(atMs: number): void {
    if (this.holdUntilMs !== undefined && atMs >= this.holdUntilMs) {
      this.cutOffSinceMs = undefined;
      this.holdUntilMs = undefined;
    }
  }
}
