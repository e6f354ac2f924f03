import { ChaosEvidence } from './chaos-evidence';

/**
 * Invariants 5 and 6 against the HTTP demo servers' own records (stdio children die with their
 * pollers, so their counters cannot be read back):
 * - no task submitted upstream twice (by tag), unless its toolset declares retryOnCrash;
 * - a task that ended with the upstream's own answer was submitted exactly once (at least once
 *   for retryOnCrash);
 * - every job an upstream created is the stored remote handle of its task, or was cancelled, or
 *   its task honestly ended `outcome_uncertain` (the answer that named it never arrived).
 */
export function upstreamViolations(evidence: ChaosEvidence): string[] {
  const problems: string[] = [];
  const byTag = new Map(evidence.driven.map((d) => [d.plan.tag, d]));
  for (const driven of evidence.driven) {
    const { plan } = driven;
    if (plan.toolset.upstream === 'stdio' || driven.taskId === undefined) continue;
    const task = evidence.tasks.get(driven.taskId);
    const submits = evidence.submitsByTag.get(plan.tag) ?? 0;
    if (submits > 1 && !plan.toolset.retryOnCrash) {
      problems.push(`${plan.tag} (${driven.taskId}): submitted upstream ${submits} times`);
    }
    const answered =
      task?.status === 'completed' ||
      (task?.status === 'failed' && task.error_code === 'upstream_failed');
    if (answered && submits === 0) {
      problems.push(`${plan.tag} (${driven.taskId}): ${task.status} without any upstream submit`);
    }
  }
  for (const job of evidence.upstreamJobs) {
    if (job.contract === 'sync') continue;
    const driven = job.args.tag ? byTag.get(job.args.tag) : undefined;
    const task = driven?.taskId ? evidence.tasks.get(driven.taskId) : undefined;
    if (!task) {
      problems.push(`upstream job ${job.id} (tag ${job.args.tag ?? '-'}) belongs to no task`);
      continue;
    }
    if (driven?.plan.toolset.handleOutsideStateFile) continue;
    if (task.remote_task_id === job.id || job.cancelledAt !== undefined) continue;
    if (task.status === 'failed' && task.error_code === 'outcome_uncertain') continue;
    problems.push(
      `${job.args.tag} (${task.id}): upstream job ${job.id} lost: the task holds ` +
        `${task.remote_task_id ?? 'no handle'} and ended ${task.status}/${task.error_code ?? '-'}`,
    );
  }
  return problems;
}

/** Every terminal event reached the receiver at least once, each with a valid signature. */
export function webhookViolations(evidence: ChaosEvidence): string[] {
  const hooks = evidence.webhooks;
  if (!hooks) return [];
  const problems = hooks.badSignatures.map((id) => `webhook ${id}: signature did not verify`);
  for (const driven of evidence.driven) {
    const task = driven.taskId ? evidence.tasks.get(driven.taskId) : undefined;
    if (!task || !['completed', 'failed', 'cancelled'].includes(task.status)) continue;
    if (!hooks.has(task.id, `task.${task.status}`)) {
      problems.push(`${driven.plan.tag} (${task.id}): task.${task.status} never delivered`);
    }
  }
  return problems;
}
