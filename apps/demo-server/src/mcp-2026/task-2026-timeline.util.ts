import type { TaskPhase2026, TaskRecord2026 } from './task-2026.types';

/** When the task ends by itself, or undefined while a question is still open. */
function endsAt(task: TaskRecord2026): number | undefined {
  const keys = Object.keys(task.plan.questions ?? {});
  const askAt = task.createdAt + task.plan.workMs;
  if (keys.length === 0) return askAt;
  if (keys.some((key) => !task.answers.has(key))) return undefined;
  return lastAnswerAt(task) + task.plan.resumeMs;
}

function lastAnswerAt(task: TaskRecord2026): number {
  let last = task.createdAt;
  for (const { at } of task.answers.values()) last = Math.max(last, at);
  return last;
}

/**
 * The task's state at `now`, computed rather than stored (as the 2025 side's job timeline is).
 * A cancel wins only if it came before the end, so a finished task keeps its real outcome.
 */
export function taskPhase(task: TaskRecord2026, now: number): TaskPhase2026 {
  if (task.plan.external) return task.plan.external.phase(new Set(task.answers.keys()));
  const end = endsAt(task);
  if (task.cancelledAt !== undefined && (end === undefined || task.cancelledAt < end)) {
    return { status: 'cancelled', since: task.cancelledAt };
  }
  if (end !== undefined && now >= end) {
    const answers = Object.fromEntries(
      [...task.answers].map(([key, { response }]) => [key, response]),
    );
    const ending = task.plan.finish(answers);
    return { status: ending.status, since: end, ending };
  }
  const keys = Object.keys(task.plan.questions ?? {});
  const askAt = task.createdAt + task.plan.workMs;
  if (keys.length === 0 || now < askAt) return { status: 'working', since: task.createdAt };
  const pending = keys.filter((key) => !task.answers.has(key));
  if (pending.length === 0) return { status: 'working', since: lastAnswerAt(task) };
  return { status: 'input_required', since: Math.max(askAt, lastAnswerAt(task)), pending };
}

export function isTerminal2026(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
