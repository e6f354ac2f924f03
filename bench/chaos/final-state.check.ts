import { ChaosEvidence, FinalTask, isClaim } from './chaos-evidence';
import { FaultEvent } from './fault-schedule';
import { DrivenTask } from './task-driver';

// Clock slack between the run's wall clock (fault windows) and the database's (task rows):
// same machine, so this only absorbs the few ms between recording and acting.
const SLACK_MS = 1000;

const NO_FAULT_TIMEOUT = 'outcome_uncertain after an upstream call timeout (no injected fault)';
/**
 * Timeouts with no fault near them are honest but must stay rare: more than 1 % of the accepted
 * tasks (at least 2) means the gateway or the machine, not the run, is failing calls.
 */
function noFaultTimeoutCap(accepted: number): number {
  return Math.max(2, Math.floor(accepted / 100));
}

/** The outcome of the final-state check: violations, plus why each honest deviation was allowed. */
export interface FinalStateReport {
  violations: string[];
  /** e.g. "outcome_uncertain after poller-kill" → count. */
  excused: Map<string, number>;
  /**
   * The accepted tasks a fault reached (the same windows and targets as the excuses), however
   * they ended: what the excused outcomes are a share of.
   */
  reached: number;
}

/**
 * Every task ends in the state its arguments scripted, or in the honest answer a fault forced:
 * - `failed/outcome_uncertain` (toolsets without retryOnCrash, or a retryOnCrash task whose
 *   cancel was requested) when a fault hit the task between its first claim and its end: its
 *   claim holder was killed or paused, Postgres restarted, or its upstream crashed or hung;
 * - `failed/upstream_task_lost` for a native task whose holder died: the HTTP upstream that
 *   restarted (native tasks live in its memory), or the poller owning its stdio child.
 */
export function finalStateViolations(evidence: ChaosEvidence): FinalStateReport {
  const report: FinalStateReport = { violations: [], excused: new Map(), reached: 0 };
  for (const driven of evidence.driven) {
    const { plan } = driven;
    if (driven.taskId === undefined) {
      report.violations.push(`${plan.tag}: never accepted by the API: ${driven.submitError}`);
      continue;
    }
    const task = evidence.tasks.get(driven.taskId);
    const label = `${plan.tag} (${driven.taskId}, ${plan.toolset.name}, ${plan.script})`;
    if (!task) {
      report.violations.push(`${label}: accepted but missing from the database`);
      continue;
    }
    if (!['completed', 'failed', 'cancelled'].includes(task.status)) {
      report.violations.push(`${label}: not terminal after the drain (${task.status})`);
      continue;
    }
    const faults = faultsOn(driven, task, evidence);
    if (faults.cause || faults.lost) report.reached++;
    const { expected } = plan;
    if (task.status === expected.status && (!expected.code || task.error_code === expected.code)) {
      continue;
    }
    const excuse = honestExcuse(driven, task, faults);
    if (excuse) {
      report.excused.set(excuse, (report.excused.get(excuse) ?? 0) + 1);
      continue;
    }
    const got = `${task.status}${task.error_code ? `/${task.error_code}` : ''}`;
    const want = `${expected.status}${expected.code ? `/${expected.code}` : ''}`;
    report.violations.push(
      `${label}: ended ${got}, scripted ${want} (cancel answer ${String(driven.cancelAnswer ?? '-')})` +
        `: ${task.error_message ?? ''}`.slice(0, 400),
    );
  }
  const timeouts = report.excused.get(NO_FAULT_TIMEOUT) ?? 0;
  const cap = noFaultTimeoutCap(evidence.tasks.size);
  if (timeouts > cap) {
    report.violations.push(
      `${timeouts} tasks ended outcome_uncertain on an upstream call timeout with no injected ` +
        `fault near them (at most ${cap} are allowed: 1 % of the accepted tasks, at least 2)`,
    );
  }
  return report;
}

/**
 * The faults that reached a task: `cause`, one that may have broken its call (its holder killed
 * or paused, Postgres restarted, its upstream restarted or hung, within the task's claimed
 * life), and `lost`, one that took a native task's state with it (the upstream or pinned poller
 * that held it).
 */
function faultsOn(
  driven: DrivenTask,
  task: FinalTask,
  evidence: ChaosEvidence,
): { cause?: FaultEvent; lost?: FaultEvent } {
  const { toolset } = driven.plan;
  const claims = (evidence.audit.get(task.id) ?? []).filter(isClaim);
  const from = (claims[0]?.at.getTime() ?? task.completed_at!.getTime()) - SLACK_MS;
  const to = task.completed_at!.getTime() + SLACK_MS;
  // A fault's consequences outlast it by up to a lease: pooled and task sessions broken by an
  // upstream or database restart are found dead on their next use (docs/chaos.md, Findings).
  const hit = (e: FaultEvent): boolean => e.start <= to && e.end + evidence.leaseMs >= from;
  const heldBy = (e: FaultEvent): boolean => {
    const before = claims.filter((c) => c.at.getTime() <= e.start + SLACK_MS);
    return before.length > 0 && before[before.length - 1].new_owner === e.target;
  };
  const claimedSoonAfter = (e: FaultEvent): boolean =>
    claims.some(
      (c) =>
        c.new_owner === e.target &&
        c.at.getTime() >= e.start - SLACK_MS &&
        c.at.getTime() <= e.end + evidence.leaseMs,
    );
  const cause = evidence.faults.find((e) => {
    if (!hit(e)) return false;
    if (e.kind === 'poller-kill') return heldBy(e);
    // A frozen poller's upstream sessions may have died meanwhile; it finds them dead on their
    // next use, so a claim it took within a lease after waking is hit as well (docs/chaos.md).
    if (e.kind === 'poller-pause') return heldBy(e) || claimedSoonAfter(e);
    if (e.kind === 'pg-restart' || e.kind === 'pg-failover') return true;
    if (e.kind === 'upstream-restart') return toolset.upstream === 'a';
    return toolset.upstream === 'b';
  });
  const lost =
    toolset.contract === 'mcp-tasks'
      ? evidence.faults.find(
          (e) =>
            hit(e) &&
            ((toolset.upstream === 'a' && e.kind === 'upstream-restart') ||
              (toolset.upstream === 'stdio' &&
                (e.kind === 'poller-kill' || e.kind === 'poller-pause') &&
                e.target === task.pinned_worker_id)),
        )
      : undefined;
  return { cause, lost };
}

function honestExcuse(
  driven: DrivenTask,
  task: FinalTask,
  { cause, lost }: { cause?: FaultEvent; lost?: FaultEvent },
): string | undefined {
  const { toolset } = driven.plan;
  if (task.status !== 'failed') return undefined;
  // retryOnCrash toolsets are re-run after a crash, except when a cancel meets the dead holder's
  // call: crash-rules.ts then ends them outcome_uncertain too (nothing left to cancel or repeat).
  const uncertainAllowed = !toolset.retryOnCrash || task.cancel_requested_at !== null;
  if (task.error_code === 'outcome_uncertain' && uncertainAllowed && cause) {
    return `outcome_uncertain after ${cause.kind}`;
  }
  // contracts.md: a submit that timed out after sending is uncertain, whatever made the upstream
  // slow (here: load on a shared 2-core box). Honest, but counted apart so the report shows it.
  if (
    task.error_code === 'outcome_uncertain' &&
    !toolset.retryOnCrash &&
    /did not answer within \d+ ms/.test(task.error_message ?? '')
  ) {
    return NO_FAULT_TIMEOUT;
  }
  if (task.error_code === 'upstream_task_lost' && lost) {
    return `upstream_task_lost after ${lost.kind}`;
  }
  return undefined;
}
