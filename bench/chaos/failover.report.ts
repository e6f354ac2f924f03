import { ChaosEvidence, isClaim } from './chaos-evidence';

/** What a Postgres failover did to the run (docs/chaos.md, "Postgres failover"). */
export interface FailoverFigures {
  /** Accepted tasks missing from the new primary. */
  lost: string[];
  /** Tasks submitted upstream more than once (HTTP upstreams; not retryOnCrash). */
  duplicateSubmits: string[];
  /** Tasks nobody cancelled that ended cancelled, or whose stored handle's work was cancelled. */
  wronglyCancelled: string[];
  /** Tasks that ended failed/outcome_uncertain. */
  outcomeUncertain: number;
  /** From the primary's crash to the standby's promotion, and to the proxy's switch. */
  promotedMs: number;
  switchedMs: number;
  /** From the switch to the first claim on the new primary (the audit's database clock). */
  claimsResumedMs?: number;
}

const CANCEL_SCRIPTS = new Set(['cancel', 'cancel-at-once', 'error-status']);

/** The failover's figures, or undefined when the run injected none. */
export function failoverFigures(evidence: ChaosEvidence): FailoverFigures | undefined {
  const times = evidence.failover;
  if (!times) return undefined;
  const lost: string[] = [];
  const duplicateSubmits: string[] = [];
  const wronglyCancelled: string[] = [];
  let outcomeUncertain = 0;
  for (const driven of evidence.driven) {
    const { plan } = driven;
    if (driven.taskId === undefined) continue;
    const label = `${plan.tag} (${driven.taskId}, ${plan.toolset.name})`;
    const task = evidence.tasks.get(driven.taskId);
    if (!task) {
      lost.push(`${label}: accepted, missing from the new primary`);
      continue;
    }
    if (task.status === 'failed' && task.error_code === 'outcome_uncertain') outcomeUncertain++;
    const http = plan.toolset.upstream !== 'stdio';
    const submits = evidence.submitsByTag.get(plan.tag) ?? 0;
    if (http && submits > 1 && !plan.toolset.retryOnCrash) {
      duplicateSubmits.push(`${label}: submitted upstream ${submits} times`);
    }
    if (CANCEL_SCRIPTS.has(plan.script)) continue;
    // Wrong: a task nobody cancelled ends cancelled, or its stored handle's work is cancelled
    // upstream. A cancel of work whose handle never got stored (the task then ends
    // outcome_uncertain) is the gateway cleaning up an orphan, not a wrong cancel.
    const cancels = evidence.cancelsByTag?.get(plan.tag) ?? 0;
    if (task.status === 'cancelled' || (cancels > 0 && task.remote_task_id !== null)) {
      wronglyCancelled.push(
        `${label}: scripted ${plan.script}, ${cancels} upstream cancel(s), ended ${task.status}`,
      );
    }
  }
  const firstClaim = [...evidence.audit.values()]
    .flat()
    .filter((row) => isClaim(row) && row.at.getTime() >= times.switchedAt)
    .reduce<number | undefined>(
      (first, row) => Math.min(first ?? Infinity, row.at.getTime()),
      undefined,
    );
  return {
    lost,
    duplicateSubmits,
    wronglyCancelled,
    outcomeUncertain,
    promotedMs: times.promotedAt - times.crashedAt,
    switchedMs: times.switchedAt - times.crashedAt,
    claimsResumedMs: firstClaim === undefined ? undefined : firstClaim - times.switchedAt,
  };
}
