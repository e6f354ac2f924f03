import {
  DEFAULT_DURATION_MS,
  DEFAULT_INPUT_REQUIRED_FOR_MS,
  type JobArgs,
} from './job-args.schema';
import { firstAfter } from './push/task-change.timers';

export type JobStatus = 'running' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** What the timeline needs: nothing that changes except the cancel time, set once. */
export interface JobTimelineInput {
  id: string;
  submittedAt: number;
  args: JobArgs;
  cancelledAt?: number;
}

export interface JobPhase {
  status: JobStatus;
  /** When the current phase began (epoch ms); used for lastUpdatedAt and TTL expiry. */
  since: number;
  question?: string;
  progress?: { current: number; total: number; message: string };
}

export function isTerminalStatus(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

export function jobEndsAt(job: JobTimelineInput): number {
  return job.submittedAt + (job.args.duration_ms ?? DEFAULT_DURATION_MS);
}

/**
 * The job's state at `now`, computed rather than stored: no timers to leak, and a server
 * restarted from its state file gives the same answers. Cancel wins only if it came before the end.
 */
export function jobPhase(job: JobTimelineInput, now: number): JobPhase {
  const { args, submittedAt } = job;
  const total = args.duration_ms ?? DEFAULT_DURATION_MS;
  const end = submittedAt + total;
  if (job.cancelledAt !== undefined && job.cancelledAt < end) {
    return { status: 'cancelled', since: job.cancelledAt };
  }
  if (now >= end) {
    return { status: args.outcome === 'fail' ? 'failed' : 'completed', since: end };
  }
  const elapsed = Math.max(0, now - submittedAt);
  const progress = args.progress
    ? {
        current: elapsed,
        total,
        message: `${Math.floor((elapsed * 100) / Math.max(total, 1))}% done`,
      }
    : undefined;
  if (args.input_required_after_ms !== undefined) {
    const start = submittedAt + args.input_required_after_ms;
    const stop = start + (args.input_required_for_ms ?? DEFAULT_INPUT_REQUIRED_FOR_MS);
    if (now >= start && now < stop) {
      return { status: 'input_required', since: start, question: inputQuestion(job), progress };
    }
    if (now >= stop) return { status: 'running', since: stop, progress };
  }
  return { status: 'running', since: submittedAt, progress };
}

/** When the job's status next moves by itself: its question asked or withdrawn, or its end. */
export function jobNextChange(job: JobTimelineInput, now: number): number | undefined {
  if (job.cancelledAt !== undefined) return undefined;
  const { args, submittedAt } = job;
  const end = submittedAt + (args.duration_ms ?? DEFAULT_DURATION_MS);
  const after = args.input_required_after_ms;
  const start = after === undefined ? undefined : submittedAt + after;
  const stop =
    start === undefined
      ? undefined
      : start + (args.input_required_for_ms ?? DEFAULT_INPUT_REQUIRED_FOR_MS);
  return firstAfter(
    now,
    [start, stop, end].map((t) => (t !== undefined && t <= end ? t : undefined)),
  );
}

export function inputQuestion(job: JobTimelineInput): string {
  return `Demo job ${job.id} needs input: please confirm to continue.`;
}
