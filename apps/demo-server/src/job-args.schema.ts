import { z } from 'zod';

/**
 * The job arguments shared by every long-running demo tool. All optional, so a bare call is a
 * two-second job that completes. The job's state is a pure function of these arguments, the
 * submit time and the cancel time (see job-timeline.util.ts), which is what lets a restarted server
 * with a state file answer exactly as the old one would have.
 */
export const jobArgsShape = {
  duration_ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600 * 1000)
    .optional()
    .describe('How long the job runs, in milliseconds. Default 2000.'),
  outcome: z
    .enum(['complete', 'fail'])
    .optional()
    .describe('How the job ends when it is not cancelled: "complete" (default) or "fail".'),
  result_size: z
    .number()
    .int()
    .min(0)
    .max(16 * 1024 * 1024)
    .optional()
    .describe('Adds a filler string of this many bytes to the result (field "filler"). Default 0.'),
  result: z
    .unknown()
    .optional()
    .describe('Any JSON to return as the result. Default: {"echo": <these arguments>}.'),
  fail_message: z
    .string()
    .max(100_000)
    .optional()
    .describe('The error text reported when outcome is "fail".'),
  poll_after_seconds: z
    .number()
    .positive()
    .optional()
    .describe('Hint returned on status answers: how many seconds to wait before the next poll.'),
  input_required_after_ms: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Starts an "input required" episode this many ms after submit (inside the job).'),
  input_required_for_ms: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('How long the "input required" episode lasts, in ms. Default 1000.'),
  progress: z
    .boolean()
    .optional()
    .describe('When true, status answers carry progress {current, total, message} (ms elapsed).'),
  tag: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('A label chosen by the caller; demo_stats counts submits and cancels per tag.'),
  fault_detail: z
    .string()
    .max(100_000)
    .optional()
    .describe('Text used by the faults that answer with a tool error (isError).'),
};

/** A task's poll-interval hint in ms: pollInterval (2025-11-25) or pollIntervalMs (2026-07-28). */
export const pollIntervalArg = z
  .number()
  .int()
  .min(1)
  .max(86_400_000)
  .optional()
  .describe("The task's poll-interval hint in ms (default 500).");

/** Faults of the `ordinary` contract, set per job on demo_submit. */
export const ORDINARY_FAULTS = [
  'hang_submit',
  'hang_status',
  'error_submit',
  'error_status',
  'error_cancel',
  'crash_submit',
  'crash_status',
  'bad_status_value',
  'wrong_task_id',
  'missing_input_required',
  'bad_poll_after',
  'bad_artifact',
  'huge_artifact',
  'huge_input_required',
  'long_task_id',
  'bad_submit_shape',
  'text_only_submit',
  'task_not_found',
  'artifact',
  'nul_text',
  'nul_error_status',
] as const;
export type OrdinaryFault = (typeof ORDINARY_FAULTS)[number];

/** Faults of the `sync-call` tool demo_slow. */
export const SYNC_FAULTS = ['crash_call', 'hang_call'] as const;
export type SyncFault = (typeof SYNC_FAULTS)[number];

/** The job arguments as stored; `fault` is kept as a plain string so one record fits all tools. */
export type JobArgs = z.infer<z.ZodObject<typeof jobArgsShape>> & {
  fault?: string;
  poll_interval_ms?: number;
};

export const DEFAULT_DURATION_MS = 2000;
export const DEFAULT_INPUT_REQUIRED_FOR_MS = 1000;
