/** What one claim statement returned, and what it says about rows it left behind. */
export interface ClaimedBatch<T> {
  items: T[];
  /**
   * More rows may be due for this worker right now although the claim was not full (a capacity
   * rule filled one part of its room during the claim, and rows of other parts may wait behind
   * them): the engine claims again at once if it has room.
   */
  again?: boolean;
  /** Due rows were left for lack of room (a full part was skipped): claim when room frees. */
  leftBehind?: boolean;
  /**
   * A concurrent claim held rows this one would have taken, so it came back short with rows
   * maybe still due: the engine claims again once the claim gap has passed (by then that claim
   * has most likely committed), not at once, which would only meet its locks again.
   */
  contended?: boolean;
}

/**
 * One kind of leased work (task attempts, webhook deliveries): how to claim it, run it and give
 * it back. The engine owns when and how much to claim; this owns what a claim and a run are.
 */
export interface LeasedWork<T> {
  /** Claims at most `limit` due rows under this process's worker ID. May reject (database down). */
  claim(limit: number): Promise<ClaimedBatch<T>>;
  /**
   * Milliseconds from now until the earliest due time after the last claim statement began
   * (`sinceClaimMs` ago; 0 for one that fell due since), by the database clock, or null when
   * none. A lease that expires is such a due time: a worker that wakes at it rescues a dead
   * worker's rows within the poll interval of the expiry (leases.md, invariant 3). Rows due
   * before the claim and left by it are not counted: the claim did not take them, so waking for
   * them would spin.
   */
  earliestDueMs?(sinceClaimMs: number): Promise<number | null>;
  /** The claim's identity (its lease token): a row claimed again after a lost lease is another item. */
  key(item: T): string;
  /**
   * Runs one item on its own; should not reject (a rejection is logged and counted as settled).
   * Resolves with when that row is due next, in ms from now, if the item knows it.
   */
  run(item: T, controller: AbortController): Promise<number | undefined>;
  /** Gives back a claimed row the capacity rule no longer had room for (rare). */
  giveBack?(item: T): Promise<void>;
}

/** How much of one kind of work this process may run at once. */
export interface Capacity<T> {
  /** How many rows a claim may take now. */
  claimable(): number;
  /** Takes room for a claimed item before it starts; false when it does not fit. */
  acquire(item: T): boolean;
  /** Gives back the room an item took, once it settled. */
  release(item: T): void;
}

/** The logger methods the engine uses (pino's shape). */
export interface EngineLog {
  warn(obj: object, msg: string): void;
}
