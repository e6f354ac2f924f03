import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { jobArgsShape } from '../job-args.schema';
import { demoTaskArgs } from './demo-task-2026.args';
import { completedJobResult, failedJobResult } from '../job-result.util';
import {
  inputQuestion,
  isTerminalStatus,
  jobEndsAt,
  jobNextChange,
  type JobPhase,
} from '../job-timeline.util';
import type { JobRecord, JobRegistry } from '../job.registry';
import type { TaskPhase2026 } from './task-2026.types';
import { defineTool, type Tool2026 } from './tool-2026.types';
import { ask, DEFAULT_POLL_INTERVAL_MS, DEFAULT_TTL_MS, delay } from './tool-2026.util';

const INPUT_KEY = 'input';

const schema = z.object({
  ...jobArgsShape,
  poll_interval_ms: demoTaskArgs.shape.poll_interval_ms,
  ttl_ms: demoTaskArgs.shape.ttl_ms,
});

/**
 * The 2025 job's phase in 2026 words. A failed job is a tool error (completed, isError), as
 * tasks/result reports it on the 2025 side; the input episode shows one question (key "input")
 * until it is answered or the episode ends, and the job resumes on its own clock either way.
 */
function toPhase2026(
  job: JobRecord,
  phase: JobPhase,
  answered: ReadonlySet<string>,
): TaskPhase2026 {
  switch (phase.status) {
    case 'running':
      return { status: 'working', since: phase.since };
    case 'input_required':
      return answered.has(INPUT_KEY)
        ? { status: 'working', since: phase.since }
        : { status: 'input_required', since: phase.since, pending: [INPUT_KEY] };
    case 'completed':
      return {
        status: 'completed',
        since: phase.since,
        ending: { status: 'completed', result: completedJobResult(job.args) },
      };
    case 'failed':
      return {
        status: 'completed',
        since: phase.since,
        ending: { status: 'completed', result: failedJobResult(job.args) },
      };
    case 'cancelled':
      return { status: 'cancelled', since: phase.since };
  }
}

/**
 * `demo_task_required` and `demo_task_optional` on the 2026 side: the same jobs, arguments and
 * demo_stats counts as the 2025 tools of those names, so one gateway test can run against both
 * task designs by changing only the protocol.
 */
export function jobTaskTools2026(registry: JobRegistry): Tool2026[] {
  const modes = [
    ['demo_task_required', 'required'],
    ['demo_task_optional', 'optional'],
  ] as const;
  return modes.map(([name, mode]) =>
    defineTool({
      name,
      description:
        'Runs a demo job (the arguments of the 2025-11-25 tool of this name) as a SEP-2663 task. ' +
        (mode === 'required'
          ? 'Task mode required: without the tasks extension the call gets -32021.'
          : 'Without the tasks extension the call waits for the job and returns its result.'),
      mode,
      schema,
      call: async (args, call) => {
        const job = registry.create('tasks', args, `task_${randomBytes(12).toString('hex')}`);
        if (!call.declaresTasks) {
          registry.countTag(args.tag, 'submits');
          // Timers run on the event loop's cached clock, which can lag the wall clock the
          // timeline is computed on: one timer may wake a few ms before the job's end.
          let end = registry.phase(job);
          while (!isTerminalStatus(end.status)) {
            await delay(Math.max(1, jobEndsAt(job) - registry.now()), call.signal).catch(
              (error: unknown) => {
                registry.cancel(job);
                throw error;
              },
            );
            end = registry.phase(job);
          }
          const result =
            end.status === 'completed' ? completedJobResult(args) : failedJobResult(args);
          return { kind: 'complete', result };
        }
        return {
          kind: 'task',
          plan: {
            workMs: 0,
            resumeMs: 0,
            questions: {
              [INPUT_KEY]: ask(inputQuestion(job), 'confirm', {
                type: 'boolean',
                title: 'Confirm',
              }),
            },
            finish: () => ({ status: 'completed', result: completedJobResult(args) }),
            ttlMs: args.ttl_ms ?? DEFAULT_TTL_MS,
            pollIntervalMs: args.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS,
            tag: args.tag,
            external: {
              phase: (answered) => toPhase2026(job, registry.phase(job), answered),
              cancel: () => void registry.cancel(job),
              nextChange: (now) => jobNextChange(job, now),
            },
          },
        };
      },
    }),
  );
}
