import type { JobArgs } from './job-args.schema';

/**
 * The result a finished job reports. Without `result` the job echoes its arguments so a test can
 * see its own input come back; `result_size` adds a filler to exercise the result-size bounds.
 */
export function jobResult(args: JobArgs): unknown {
  const base = args.result !== undefined ? args.result : { echo: args };
  const size = args.result_size ?? 0;
  if (size === 0) return base;
  const filler = 'x'.repeat(size);
  if (base !== null && typeof base === 'object' && !Array.isArray(base)) {
    return { ...(base as Record<string, unknown>), filler };
  }
  return { value: base, filler };
}

export function jobFailMessage(args: JobArgs): string {
  return args.fail_message ?? 'The demo job failed as requested (outcome "fail").';
}

export function faultDetail(args: JobArgs, fallback: string): string {
  return args.fault_detail ?? fallback;
}
