import { Logger } from 'pino';

/** The fields every log line about a claimed task carries (operations.md). */
export interface TaskLogContext {
  readonly task_id: string;
  readonly phase: string;
  readonly toolset: string;
  /** The claim's correlation ID (not its lease token, which is a secret of the fence). */
  readonly claim_id: string;
}

/**
 * A child logger bound to one claimed task, so a poller's per-item lines can be joined in a log
 * search by `task_id` or `claim_id` without each call site repeating them.
 * @example const log = taskLogger(logger, { task_id, phase: 'poll', toolset, claim_id });
 */
export function taskLogger(base: Logger, context: TaskLogContext): Logger {
  return base.child({
    task_id: context.task_id,
    phase: context.phase,
    toolset: context.toolset,
    claim_id: context.claim_id,
  });
}
