import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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

/** The tool result of a completed job: the result as text, and as structuredContent when an object. */
export function completedJobResult(args: JobArgs): CallToolResult {
  const result = jobResult(args);
  const structured =
    result !== null && typeof result === 'object' && !Array.isArray(result)
      ? { structuredContent: result as Record<string, unknown> }
      : {};
  return { content: [{ type: 'text', text: JSON.stringify(result) }], ...structured };
}

/** The tool result of a job that ended with outcome "fail": a tool error. */
export function failedJobResult(args: JobArgs): CallToolResult {
  return { content: [{ type: 'text', text: jobFailMessage(args) }], isError: true };
}
