import { z } from 'zod';
import { pollIntervalArg } from '../job-args.schema';

/**
 * The arguments of the 2026 side's demo task tools. All optional: a bare `demo_task` call is
 * a two-second task that completes. Defaults live in DEMO_TASK_DEFAULTS, not in the schema, so
 * the preset tools (demo_ask_one, demo_long, …) can put their own defaults under the caller's.
 */
export const demoTaskArgs = z.object({
  duration_ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3_600_000)
    .optional()
    .describe('Working time before the task ends (without questions). Default 2000.'),
  questions: z
    .union([z.literal(0), z.literal(1), z.literal(2)])
    .optional()
    .describe(
      '0 (default), 1 (key "confirm") or 2 questions asked at once (keys "name", "confirm").',
    ),
  ask_after_ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3_600_000)
    .optional()
    .describe('With questions: working time before they are asked. Default 200.'),
  resume_ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3_600_000)
    .optional()
    .describe('With questions: working time after the last answer before the end. Default 500.'),
  outcome: z
    .enum(['complete', 'tool_error', 'protocol_error'])
    .optional()
    .describe('How the task ends: a result (default), a tool error (isError) or a JSON-RPC error.'),
  immediate: z
    .boolean()
    .optional()
    .describe('When true the server makes no task and answers resultType "complete" at once.'),
  result: z
    .unknown()
    .optional()
    .describe('JSON returned as structuredContent. Default {echo, answers}.'),
  fail_message: z
    .string()
    .max(100_000)
    .optional()
    .describe('The text of a tool_error or protocol_error.'),
  ttl_ms: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3_600_000)
    .optional()
    .describe(
      "The task's ttlMs: it reads as not found (-32602) this long after creation. Default 3600000.",
    ),
  poll_interval_ms: pollIntervalArg,
  tag: z.string().min(1).max(200).optional().describe('A label; demo_stats counts per tag.'),
});

export type DemoTaskArgs = z.infer<typeof demoTaskArgs>;

type Defaulted =
  | 'duration_ms'
  | 'questions'
  | 'ask_after_ms'
  | 'resume_ms'
  | 'outcome'
  | 'ttl_ms'
  | 'poll_interval_ms';

/** The arguments once defaults are applied. */
export type ResolvedDemoTaskArgs = DemoTaskArgs & Required<Pick<DemoTaskArgs, Defaulted>>;

const DEMO_TASK_DEFAULTS: Required<Pick<DemoTaskArgs, Defaulted>> = {
  duration_ms: 2000,
  questions: 0,
  ask_after_ms: 200,
  resume_ms: 500,
  outcome: 'complete',
  ttl_ms: 3_600_000,
  poll_interval_ms: 500,
};

/** Caller's arguments over the preset's over the defaults; absent keys never override. */
export function withDefaults(
  args: DemoTaskArgs,
  preset: Partial<DemoTaskArgs>,
): ResolvedDemoTaskArgs {
  const given = Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
  return { ...DEMO_TASK_DEFAULTS, ...preset, ...given };
}
