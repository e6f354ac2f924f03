import { Phase } from '@app/common';
import { TaskRow, toTaskRow } from './task-row';

/** The right to write about one task row: fenced by `token`, valid until the lease expires. */
export interface TaskLease {
  taskId: string;
  token: string;
}

/** A row as the claim returned it, with what the caller needs to act and to measure. */
export interface ClaimedTask extends TaskRow {
  lease: TaskLease;
  phase: Phase;
  /** The previous lease expired: a crashed or stalled worker's claim taken over. */
  rescued: boolean;
  dueLagSeconds: number;
  /** The claim statement's `now()`: the database time the lease's length is counted from. */
  dbNow: Date;
  /**
   * This process's clock when the claim statement was sent. The claim's `now()` happened after
   * it, so `claimSentAtMs + (leaseExpiresAt - dbNow)` never places the lease's end later than it
   * is (leases.md, "Attempt deadlines").
   */
  claimSentAtMs: number;
  /**
   * This claim's number on the row (`claim_count` once it leased it). A terminal write copies it
   * into the task row, so the row tells whether its end was stored under this claim.
   */
  claimCount: number;
}

/** What the claim statement returns per leased row (claim.sql.ts `LEASE_AND_RETURN`). */
export interface ClaimRow {
  id: string;
  lease_owner: string;
  lease_token: string;
  lease_expires_at: Date;
  phase: Phase;
  rescued: boolean;
  due_lag_seconds: number | string;
  db_now: Date;
  claim_count: number;
}

/**
 * A claimed task from its row (read after the claim) and the claim's own answer, whose lease
 * fields are the ones that count: the row was read after the lease was taken.
 *
 * The claim's fields are set on the mapped row itself, not spread into a new literal
 * (`{ ...toTaskRow(row), lease, … }`): V8 gave every spread copy of the 43-field row a hidden
 * class of its own, so each field added after the spread built new maps, row by row. In a node
 * loop that cost 59 µs of CPU per row against 3.5 µs this way; a claim of 500 rows spent 30 ms
 * of the worker's CPU on it (docs/benchmarks.md, "What the profiles showed").
 */
export function toClaimedTask(
  row: Record<string, unknown>,
  claim: ClaimRow,
  claimSentAtMs: number,
): ClaimedTask {
  const task = toTaskRow(row) as ClaimedTask;
  task.leaseOwner = claim.lease_owner;
  task.leaseExpiresAt = claim.lease_expires_at;
  task.lease = { taskId: claim.id, token: claim.lease_token };
  task.phase = claim.phase;
  task.rescued = claim.rescued;
  task.dueLagSeconds = Number(claim.due_lag_seconds);
  task.dbNow = claim.db_now;
  task.claimSentAtMs = claimSentAtMs;
  task.claimCount = claim.claim_count;
  return task;
}

export interface ClaimRequest {
  workerId: string;
  /** Free slots: claim only what can start now. */
  limit: number;
  phases: readonly Phase[];
  leaseMs: number;
  /** A pinned row's worker counts as dead once its heartbeat is older than this (`deadAfterMs`). */
  deadWorkerAfterMs: number;
  /** Servers with no free slot on this worker: their rows are left to others. */
  excludeServers?: readonly string[];
  /** Free room per configured server: the claim takes no more of a server's rows than this. */
  serverRoom?: ReadonlyMap<string, number>;
  /**
   * Fair share across principals (docs/leases.md, "Fair share"): the weight per principal, 1 for
   * one not listed. Absent: due order alone.
   *
   * `open`: how many of the claim's rows are open to any principal; the rest go only to
   * principals ranked below the fleet's leader (docs/leases.md, "Fair share", the headroom). The
   * caller's free slots less FAIR_SHARE_HEADROOM. Absent, or not below `limit`: every row is open.
   */
  fairShare?: { weights: ReadonlyMap<string, number>; open?: number };
  /**
   * The tokens of the leases this process holds: never rescued by it, though one may have
   * expired in an outage (docs/leases.md, "A call's end").
   */
  heldTokens?: readonly string[];
  /**
   * Rescue only leases that expired at least this long ago (ms; 0 when absent): the hold after a
   * database outage, which leaves a lease that ran out meanwhile to its holder a while longer
   * (docs/leases.md, "Rescues after an outage").
   */
  minRescueAgeMs?: number;
  /** `fleetMaxConcurrentCalls` per server: live leases fleet-wide stay within it. */
  fleetCaps?: ReadonlyMap<string, number>;
}

/** The drivers' remote handle (libs/common), as the lease repository stores it. */
export type { RemoteHandle } from '@app/common';

/** Why a fenced write did not apply: the lease is gone, or a cancel request overtook it. */
export type WriteOutcome = 'applied' | 'lease_lost' | 'cancel_pending';

/**
 * What a held call's renewal found: still ours, and whether a cancel was requested meanwhile;
 * `deadline_cancel` when the deadline sweep requested it (the row's `cancel_reason`), so the
 * call's `cancelled` end is stored `failed` (docs/contracts.md, "Deadlines").
 */
export type RenewalOutcome = 'renewed' | 'cancel_requested' | 'deadline_cancel';
