import { ClaimRequest, ClaimRow, ClaimedTask, toClaimedTask } from './claimed-task';
import { Database, Queryable } from './database';
import { CLAIM_SQL, TASK_ROWS_BY_ID_SQL } from './sql/claim.sql';
import { FAIR_CLAIM_SQL } from './sql/fair-claim.sql';
import { FLEET_LIVE_SQL, FLEET_LOCK_SQL } from './sql/fleet-cap.sql';

/** What the claim needs of the database: statements, and a transaction for the fleet caps. */
export type ClaimDatabase = Queryable & Pick<Database, 'transaction'>;

/** What one claim took, and whether a concurrent claim held rows it would have taken. */
export interface ClaimOutcome {
  tasks: ClaimedTask[];
  /**
   * The fair-share claim locked fewer rows than it had room for because a concurrent claim held
   * some of its best-ranked ones (fair-claim.sql.ts, `contended`): rows may still be due once
   * that claim commits. Always false for the due-order claim, whose scan walks past held rows.
   */
  contended: boolean;
}

/** The leased rows of one claim statement, and its `contended` answer. */
interface Leased {
  rows: ClaimRow[];
  contended: boolean;
}

/**
 * Leases due rows (claim.sql.ts, or fair-claim.sql.ts with fair share), then reads the claimed
 * tasks by ID in a statement of their own, after the claim committed (TASK_ROWS_BY_ID_SQL says
 * why). `TaskLeaseRepository.claimBatch` is the one caller.
 */
export async function claimTasks(db: ClaimDatabase, request: ClaimRequest): Promise<ClaimOutcome> {
  if (request.limit <= 0) return { tasks: [], contended: false };
  // Before any statement of the claim: its now() (a transaction's start) is never earlier, so
  // the lease's end counted from here is never late (docs/leases.md, "Attempt deadlines").
  const sentAtMs = Date.now();
  const { rows: leased, contended } = await leaseDueRows(db, request);
  if (leased.length === 0) return { tasks: [], contended };
  const rows = await db.query(TASK_ROWS_BY_ID_SQL, [leased.map((row) => row.id)]);
  const byId = new Map(rows.map((row) => [row.id as string, row]));
  // A task row is missing only if the task was deleted since, which takes its lease row too.
  const tasks = leased.flatMap((lease) => {
    const row = byId.get(lease.id);
    return row ? [toClaimedTask(row, lease, sentAtMs)] : [];
  });
  return { tasks, contended };
}

async function leaseDueRows(db: ClaimDatabase, request: ClaimRequest): Promise<Leased> {
  const room = request.serverRoom ?? new Map<string, number>();
  const caps = [...(request.fleetCaps ?? new Map<string, number>())].filter(
    ([server]) => !request.excludeServers?.includes(server) && (room.get(server) ?? 1) > 0,
  );
  if (caps.length === 0) return leaseRows(db, request, room);
  // One claimer at a time counts a capped server's live leases and claims: two claims that
  // started together would otherwise both see the same free room (docs/leases.md, "Fleet-wide
  // caps"). Each statement in the transaction has its own snapshot, taken after the lock.
  return db.transaction(async (tx) => {
    const servers = caps.map(([server]) => server);
    await tx.query(FLEET_LOCK_SQL, [servers]);
    const live = await tx.query<{ server: string; live: number }>(FLEET_LIVE_SQL, [servers]);
    const inUse = new Map(live.map((row) => [row.server, row.live]));
    const tightened = new Map(room);
    for (const [server, max] of caps) {
      const fleetFree = Math.max(0, max - (inUse.get(server) ?? 0));
      tightened.set(server, Math.min(room.get(server) ?? fleetFree, fleetFree));
    }
    return leaseRows(tx, request, tightened);
  });
}

async function leaseRows(
  db: Queryable,
  request: ClaimRequest,
  room: ReadonlyMap<string, number>,
): Promise<Leased> {
  // A server with no room is skipped by the scan itself, so its rows never crowd the candidates.
  const full = [...room].filter(([, free]) => free <= 0).map(([server]) => server);
  const params: unknown[] = [
    request.workerId,
    request.limit,
    request.phases,
    request.leaseMs,
    request.deadWorkerAfterMs,
    [...new Set([...(request.excludeServers ?? []), ...full])],
    [...room.keys()],
    [...room.values()],
    request.heldTokens ?? [],
    request.minRescueAgeMs ?? 0,
  ];
  const fair = request.fairShare;
  if (fair) {
    // $13: null when every row is open, so the claim without headroom is the one it was before.
    const open =
      fair.open === undefined || fair.open >= request.limit ? null : Math.max(0, fair.open);
    params.push([...fair.weights.keys()], [...fair.weights.values()], open);
  }
  if (!fair) {
    return {
      rows: await db.query<ClaimRow>(CLAIM_SQL, params, 'mcp_tasks_claim'),
      contended: false,
    };
  }
  // One row per leased row with the flag beside it, or one of nulls and the flag alone.
  const answer = await db.query<FairClaimRow>(FAIR_CLAIM_SQL, params, 'mcp_tasks_claim_fair');
  return {
    rows: answer.filter((row): row is FairClaimRow & ClaimRow => row.id !== null),
    contended: answer[0]?.contended === true,
  };
}

/** The fair claim's answer: a leased row's columns (null when none was leased) and the flag. */
type FairClaimRow = { [K in keyof ClaimRow]: ClaimRow[K] | null } & { contended: boolean };
