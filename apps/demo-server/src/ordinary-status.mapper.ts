import type { OrdinaryFault } from './job-args.schema';
import type { JobRecord } from './job.registry';
import { jobFailMessage, jobResult } from './job-result.util';
import type { JobPhase } from './job-timeline.util';

/** Big enough to break the 65,536-byte bounds of contracts.md with room to spare. */
const HUGE_BYTES = 70_000;

/** The contract-following status (and cancel) answer for a job in a given phase. */
export function ordinaryAnswer(job: JobRecord, phase: JobPhase): Record<string, unknown> {
  const answer: Record<string, unknown> = { task_id: job.id, status: phase.status };
  if (phase.status === 'completed') {
    if (job.args.fault === 'artifact') {
      answer.result_artifact = { uri: `demo://artifacts/${job.id}`, mime_type: 'application/json' };
    } else {
      answer.result = jobResult(job.args);
    }
  }
  if (phase.status === 'failed') answer.error = jobFailMessage(job.args);
  if (phase.status === 'input_required') answer.input_required = { question: phase.question };
  if (phase.progress) answer.progress = phase.progress;
  if (job.args.poll_after_seconds !== undefined) {
    answer.poll_after_seconds = job.args.poll_after_seconds;
  }
  return job.args.fault === 'nul_text' ? withNul(answer) : answer;
}

const NUL = '\u0000';

/**
 * Fault `nul_text`: a valid answer whose every text carries U+0000, which Postgres can store in
 * neither text nor jsonb: the result (in a string and an object key, nested), the error, the
 * question and the progress message. The task ID is left alone so the job stays reachable.
 */
function withNul(answer: Record<string, unknown>): Record<string, unknown> {
  const out = { ...answer };
  if ('result' in out) {
    out.result = { [`key${NUL}nul`]: { nested: [`text${NUL}nul`] }, value: out.result };
  }
  if (typeof out.error === 'string') out.error = `${out.error}${NUL}(nul)`;
  if (out.input_required) {
    const question = (out.input_required as { question: string }).question;
    out.input_required = { question: `${question}${NUL}(nul)` };
  }
  if (out.progress) {
    const progress = out.progress as { message?: string };
    out.progress = { ...progress, message: `${progress.message ?? ''}${NUL}(nul)` };
  }
  return out;
}

/**
 * Contract breaks on status answers. They apply to every status answer of the job, whatever its
 * phase, so a poller meets the break on its first poll and tests stay short.
 */
export function breakStatusAnswer(
  answer: Record<string, unknown>,
  fault: string | undefined,
): Record<string, unknown> {
  switch (fault as OrdinaryFault | undefined) {
    case 'bad_status_value':
      return { ...answer, status: 'weird' };
    case 'wrong_task_id':
      return { ...answer, task_id: `${String(answer.task_id)}_wrong` };
    case 'missing_input_required': {
      const { input_required: _dropped, ...rest } = answer;
      return { ...rest, status: 'input_required' };
    }
    case 'bad_poll_after':
      return { ...answer, poll_after_seconds: -1 };
    case 'bad_artifact':
      return { ...answer, result_artifact: { uri: `demo://artifacts/${String(answer.task_id)}` } };
    case 'huge_artifact':
      return {
        ...answer,
        result_artifact: {
          uri: `demo://artifacts/${'a'.repeat(HUGE_BYTES)}`,
          mime_type: 'text/plain',
        },
      };
    case 'huge_input_required':
      return {
        ...answer,
        status: 'input_required',
        input_required: { question: 'Too big to store?', padding: 'x'.repeat(HUGE_BYTES) },
      };
    case 'task_not_found':
      return notFoundAnswer(String(answer.task_id));
    default:
      return answer;
  }
}

export function notFoundAnswer(taskId: string): Record<string, unknown> {
  return {
    task_id: taskId,
    status: 'failed',
    error_code: 'task_not_found',
    error: `No demo job with id ${taskId} (never submitted, or forgotten).`,
  };
}
