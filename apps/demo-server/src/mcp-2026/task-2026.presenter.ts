import type { TaskPhase2026, TaskRecord2026 } from './task-2026.types';

const iso = (ms: number): string => new Date(ms).toISOString();

function statusMessage(phase: TaskPhase2026): { statusMessage?: string } {
  switch (phase.status) {
    case 'input_required':
      return { statusMessage: `Waiting for input: ${(phase.pending ?? []).join(', ')}` };
    case 'failed':
      return {
        statusMessage: phase.ending?.status === 'failed' ? phase.ending.error.message : 'Failed',
      };
    case 'cancelled':
      return { statusMessage: 'Cancelled by the client.' };
    default:
      return {};
  }
}

/** The task fields every task-shaped answer carries (flat: no `task` wrapper). */
function taskFields(task: TaskRecord2026, phase: TaskPhase2026): Record<string, unknown> {
  return {
    taskId: task.taskId,
    status: phase.status,
    ...statusMessage(phase),
    createdAt: iso(task.createdAt),
    lastUpdatedAt: iso(phase.since),
    ttlMs: task.plan.ttlMs,
    pollIntervalMs: task.plan.pollIntervalMs,
  };
}

/** The answer to the `tools/call` that made the task: never result, error or inputRequests. */
export function createTaskResult(
  task: TaskRecord2026,
  phase: TaskPhase2026,
): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(task, phase) };
}

/**
 * The `tasks/get` answer: a DetailedTask with `resultType: "complete"` (not "task"), carrying
 * the field of its status: every outstanding inputRequest, the tool result, or the error.
 */
export function detailedTask(task: TaskRecord2026, phase: TaskPhase2026): Record<string, unknown> {
  const detail: Record<string, unknown> = { resultType: 'complete', ...taskFields(task, phase) };
  if (phase.status === 'input_required') {
    const questions = task.plan.questions ?? {};
    detail.inputRequests = Object.fromEntries(
      (phase.pending ?? []).map((key) => [key, questions[key]]),
    );
  }
  if (phase.ending?.status === 'completed') detail.result = phase.ending.result;
  if (phase.ending?.status === 'failed') detail.error = phase.ending.error;
  return detail;
}
