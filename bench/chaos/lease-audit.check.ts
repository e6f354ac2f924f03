import { AuditRow } from './lease-audit.sql';
import { isClaim } from './chaos-evidence';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const POLLER_APP = 'mcp-task-gateway-poller';

/**
 * Invariants 1, 2, 4 and 6 from the audit of every committed UPDATE:
 * - a claim never takes a row whose previous lease was still live (two live leases at once);
 * - every other poller write lands only under a lease that was live at that instant (the
 *   fencing predicate, re-checked from outside: a write from a paused or slow worker whose
 *   lease expired shows up here), except, by the worker whose token is still on the row, the
 *   first store of a remote handle (the rule of invariant 6 beats the fence), a renewal before
 *   a handle is stored, and the end of a call with no handle (docs/leases.md, "A call's end");
 * - a terminal row never changes; a stored remote handle is never replaced or cleared.
 */
export function leaseAuditViolations(audit: Map<string, AuditRow[]>): string[] {
  const problems: string[] = [];
  for (const [taskId, rows] of audit) {
    for (const row of rows) {
      const at = row.at.toISOString();
      const expires = row.old_expires?.toISOString() ?? 'none';
      if (TERMINAL.has(row.old_status)) {
        problems.push(`${taskId}: terminal row (${row.old_status}) updated at ${at} by ${row.app}`);
      }
      if (row.old_remote !== null && row.new_remote !== row.old_remote) {
        problems.push(`${taskId}: remote handle ${row.old_remote} replaced by ${row.new_remote}`);
      }
      if (row.app !== POLLER_APP) continue;
      if (isClaim(row)) {
        if (row.old_token !== null && row.old_expires !== null && row.old_expires > row.at) {
          problems.push(
            `${taskId}: claimed by ${row.new_owner} at ${at} while ${row.old_owner}'s lease ran until ${expires}`,
          );
        }
      } else if (row.schedule_only) {
        // docs/leases.md, "Pushed changes": a push wake only moves a due time or raises the
        // answers flag, holding no lease, as a consumer's answer does; the holder's own fenced
        // write reads the flag.
        continue;
      } else if (lateKind(row)) {
        // docs/leases.md, "Remote handles" and "A call's end": the holder's token was still on
        // the row (nobody claimed it since), so storing what only it holds beats losing it.
        continue;
      } else if (row.old_token === null || row.old_expires === null || row.old_expires <= row.at) {
        problems.push(
          `${taskId}: poller write at ${at} (${row.old_status} → ${row.new_status}) without a live lease ` +
            `(holder ${row.old_owner ?? 'none'}, expired ${expires})`,
        );
      }
    }
  }
  return problems;
}

/** A late write's kind: what the holder stored under its own token, its lease run out. */
type LateKind = 'handle' | 'renewal' | 'call end';

function lateKind(row: AuditRow): LateKind | undefined {
  if (lateHandleStore(row)) return 'handle';
  if (lateRenewal(row)) return 'renewal';
  if (lateCallEnd(row)) return 'call end';
  return undefined;
}

/**
 * How many poller writes landed after their lease had run out under the holder's token, by
 * kind: the report shows that a run's faults reached the exceptions the audit allows.
 */
export function lateWrites(audit: Map<string, AuditRow[]>): Record<LateKind, number> {
  const counts: Record<LateKind, number> = { handle: 0, renewal: 0, 'call end': 0 };
  for (const row of [...audit.values()].flat()) {
    if (row.app !== POLLER_APP || isClaim(row) || row.schedule_only) continue;
    if (row.old_expires === null || row.old_expires > row.at) continue;
    const kind = lateKind(row);
    if (kind) counts[kind]++;
  }
  return counts;
}

/** The first store of a remote handle under the row's current token, after the lease expired. */
function lateHandleStore(row: AuditRow): boolean {
  return (
    row.old_token !== null &&
    row.new_token === null &&
    row.old_remote === null &&
    row.new_remote !== null &&
    row.old_status === 'queued'
  );
}

/**
 * A renewal (a held call's, or a handle writer's before the handle is stored) under the row's
 * current token, after the lease expired.
 */
function lateRenewal(row: AuditRow): boolean {
  return (
    row.old_token !== null &&
    row.new_token === row.old_token &&
    row.old_status === row.new_status &&
    row.old_remote === null &&
    row.new_remote === null
  );
}

/** The end of a sent call with no remote handle under the row's current token, after the lease. */
function lateCallEnd(row: AuditRow): boolean {
  return (
    row.old_token !== null &&
    row.new_token === null &&
    row.old_remote === null &&
    row.new_remote === null &&
    row.old_submit_started !== null &&
    !TERMINAL.has(row.old_status) &&
    TERMINAL.has(row.new_status)
  );
}
