import { Contract, Phase, TaskErrorCode, TaskSnapshot, TaskStatus } from '@app/common';
import type { ToolsetConfig } from '@app/config';
import type { ClaimedTask } from '@app/persistence';

/** What to do with a claimed row before any upstream call. */
export type Preflight =
  | { kind: 'submit' }
  | { kind: 'poll' }
  | { kind: 'cancel' }
  | { kind: 'finish'; snapshot: TaskSnapshot };

function failed(code: TaskErrorCode, message: string): Preflight {
  return { kind: 'finish', snapshot: { status: TaskStatus.Failed, error: { code, message } } };
}

/**
 * The crash and ownership rules of contracts.md and leases.md, decided from the claimed row
 * alone (pure, so crash-rules.spec.ts tests it without a database):
 * - a row pinned to another worker reaches us only once that worker is dead: its stdio child
 *   and the task in it (native, or an `ordinary` job) are gone → `upstream_task_lost`;
 * - a submit (or held sync call) recorded as started with no handle stored means a worker died
 *   mid-submit: repeat only if the toolset declares `retryOnCrash`, else `outcome_uncertain`;
 * - a cancel with no remote handle: nothing was sent → `cancelled`; a submit may have been sent
 *   → `outcome_uncertain`, because we cannot cancel what we cannot name (documented honesty rule);
 * - no successful poll for TRACKING_TIMEOUT_MS (database clock of the claim) → `tracking_timeout`.
 */
export function preflight(
  item: ClaimedTask,
  toolset: Pick<ToolsetConfig, 'contract' | 'retryOnCrash'>,
  workerId: string,
  trackingTimeoutMs: number,
): Preflight {
  if (item.pinnedWorkerId !== null && item.pinnedWorkerId !== workerId) {
    return failed(
      TaskErrorCode.UpstreamTaskLost,
      `the upstream task lived in a stdio server process of worker ${item.pinnedWorkerId}, ` +
        'which stopped; durable tasks need an HTTP upstream (or a stdio server with sharedState)',
    );
  }
  const startedNoHandle = item.submitStartedAt !== null && item.remoteTaskId === null;
  const heldCall = item.contract === Contract.SyncCall;
  if (item.phase === Phase.Cancel) {
    if (item.submitStartedAt === null && item.status === TaskStatus.Queued) {
      return { kind: 'finish', snapshot: { status: TaskStatus.Cancelled } };
    }
    if (startedNoHandle) {
      return failed(
        TaskErrorCode.OutcomeUncertain,
        heldCall
          ? 'cancel requested after the worker holding the call stopped; whether the call ' +
              'completed upstream is unknown'
          : 'cancel requested, but a submit may have reached the upstream without its task ID ' +
              'being recorded (the worker stopped mid-submit); an upstream task, if any, could ' +
              'not be cancelled',
      );
    }
    return { kind: 'cancel' };
  }
  // A held call that provably never left (releaseUnsentSubmit cleared submit_started_at, but
  // the row kept the `working` that holdCall set before connecting): send it, it is no crash.
  if (heldCall && item.phase === Phase.Poll && item.submitStartedAt === null) {
    return { kind: 'submit' };
  }
  // A sync-call row claimed for poll, or a submit recorded as started: its holder died.
  if (startedNoHandle || (heldCall && item.phase === Phase.Poll)) {
    if (toolset.retryOnCrash) return { kind: 'submit' };
    return failed(
      TaskErrorCode.OutcomeUncertain,
      heldCall
        ? 'the worker holding the call stopped mid-call; its outcome is unknown and the tool is ' +
            'not declared safe to repeat (retryOnCrash)'
        : 'a worker stopped after sending the submit and before recording the answer; the ' +
            'upstream may have started the work, and the toolset is not declared safe to repeat ' +
            '(retryOnCrash)',
    );
  }
  if (item.phase === Phase.Submit) return { kind: 'submit' };
  const silentMs = trackingTimedOut(item, trackingTimeoutMs);
  if (silentMs !== undefined) {
    return failed(TaskErrorCode.TrackingTimeout, trackingMessage(silentMs));
  }
  return { kind: 'poll' };
}

/**
 * The tracking-timeout rule, in the one place it is computed (leases.md, "Scheduling after an
 * attempt"): silence runs from `last_success_at`, else `submitted_at`, else `created_at`,
 * measured against the claim's database time (never the pod's clock). Returns the silence once
 * it has reached `trackingTimeoutMs`, else undefined. Used before an attempt (preflight) and
 * after a transient error (the runner), so both judge the same row the same way.
 */
export function trackingTimedOut(
  item: Pick<ClaimedTask, 'lastSuccessAt' | 'submittedAt' | 'createdAt' | 'dbNow'>,
  trackingTimeoutMs: number,
): number | undefined {
  const since = item.lastSuccessAt ?? item.submittedAt ?? item.createdAt;
  const silentMs = item.dbNow.getTime() - since.getTime();
  return silentMs >= trackingTimeoutMs ? silentMs : undefined;
}

/** The message of a tracking timeout, shared with the runner's transient-error path. */
export function trackingMessage(silentMs: number, lastError?: string): string {
  const base = `no successful poll for ${Math.round(silentMs / 1000)} s (TRACKING_TIMEOUT_MS)`;
  return lastError ? `${base}; last error: ${lastError}` : base;
}
