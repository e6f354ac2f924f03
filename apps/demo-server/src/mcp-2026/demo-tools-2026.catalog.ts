import { z } from 'zod';
import type { JobRegistry } from '../job.registry';
import { invalidParams, JsonRpcWireError } from '@app/wire';
import {
  demoTaskArgs,
  withDefaults,
  type DemoTaskArgs,
  type ResolvedDemoTaskArgs,
} from './demo-task-2026.args';
import type { Task2026Store } from './task-2026.store';
import type { InputRequest2026, TaskEnding, TaskPlan } from './task-2026.types';
import {
  defineTool,
  type Tool2026,
  type ToolCall2026,
  type ToolOutcome2026,
} from './tool-2026.types';
import { ErrorCode2026 } from '@app/wire';
import {
  acceptedContent,
  ask,
  gatherAnswers,
  taskOrSync,
  textResult,
  toolErrorResult,
} from './tool-2026.util';

const QUESTION_SETS: Record<1 | 2, Record<string, InputRequest2026>> = {
  1: { confirm: ask('Continue the demo task?', 'confirm', { type: 'boolean', title: 'Continue' }) },
  2: {
    name: ask('Which name should the demo task use?', 'name', { type: 'string', title: 'Name' }),
    confirm: ask('Continue the demo task?', 'confirm', { type: 'boolean', title: 'Continue' }),
  },
};

function ending(args: ResolvedDemoTaskArgs, answers: Record<string, unknown>): TaskEnding {
  if (args.outcome === 'tool_error') {
    const text = args.fail_message ?? 'The demo task failed as requested (a tool error).';
    return { status: 'completed', result: toolErrorResult(text) };
  }
  if (args.outcome === 'protocol_error') {
    const message = args.fail_message ?? 'The demo task failed as requested (a protocol error).';
    return { status: 'failed', error: { code: ErrorCode2026.InternalError, message } };
  }
  const structured =
    args.result === undefined
      ? { echo: args, answers }
      : args.result !== null && typeof args.result === 'object' && !Array.isArray(args.result)
        ? (args.result as Record<string, unknown>)
        : { value: args.result };
  return { status: 'completed', result: textResult(JSON.stringify(structured), structured) };
}

function demoPlan(args: ResolvedDemoTaskArgs): TaskPlan {
  const questions = args.questions === 0 ? undefined : QUESTION_SETS[args.questions];
  return {
    workMs: questions ? args.ask_after_ms : args.duration_ms,
    questions,
    resumeMs: args.resume_ms,
    finish: (answers) => ending(args, answers),
    ttlMs: args.ttl_ms,
    pollIntervalMs: args.poll_interval_ms,
    tag: args.tag,
  };
}

/** One engine for demo_task and its presets: a task, a synchronous run, or an immediate answer. */
async function runDemoTask(
  args: ResolvedDemoTaskArgs,
  call: ToolCall2026,
): Promise<ToolOutcome2026> {
  const plan = demoPlan(args);
  if (args.immediate) {
    const end = plan.finish({});
    if (end.status === 'failed') {
      return { kind: 'error', error: new JsonRpcWireError(end.error.code, end.error.message) };
    }
    return { kind: 'complete', result: end.result };
  }
  if (!call.declaresTasks && plan.questions) {
    const round = gatherAnswers(plan.questions, call);
    if ('outcome' in round) return round.outcome;
    return taskOrSync(plan, call, round.answers);
  }
  return taskOrSync(plan, call);
}

const PRESETS: Array<{ name: string; preset: Partial<DemoTaskArgs>; what: string }> = [
  { name: 'demo_task', preset: {}, what: 'A configurable long-running task (see the arguments).' },
  {
    name: 'demo_ask_one',
    preset: { questions: 1 },
    what: 'Asks one question (key "confirm"), then completes.',
  },
  {
    name: 'demo_ask_two',
    preset: { questions: 2 },
    what: 'Asks two questions at once (keys "name", "confirm"); partial answers keep it input_required.',
  },
  {
    name: 'demo_tool_error',
    preset: { outcome: 'tool_error' },
    what: 'Ends completed with a tool error (isError).',
  },
  {
    name: 'demo_protocol_error',
    preset: { outcome: 'protocol_error' },
    what: 'Ends failed with JSON-RPC error -32603.',
  },
  {
    name: 'demo_long',
    preset: { duration_ms: 3_600_000 },
    what: 'Runs an hour unless cancelled; tasks/cancel ends it cancelled.',
  },
];

const APPROVAL = {
  approval: ask('Approve this demo run?', 'approve', { type: 'boolean', title: 'Approve' }),
};
/** Opaque to the client; the retry must echo it, which is what a careful client is tested on. */
const MRTR_STATE = Buffer.from(JSON.stringify({ tool: 'demo_mrtr', round: 1 })).toString(
  'base64url',
);

const mrtrArgs = z.object({
  duration_ms: demoTaskArgs.shape.duration_ms.describe('Work after the approval. Default 1000.'),
  then: z
    .enum(['task', 'complete'])
    .optional()
    .describe('After the approval: a task (default) or resultType "complete" at once.'),
  ttl_ms: demoTaskArgs.shape.ttl_ms,
  poll_interval_ms: demoTaskArgs.shape.poll_interval_ms,
  tag: demoTaskArgs.shape.tag,
});

/** The 2026 side's own demo tools, for the gateway's 2026 client and its tests. */
export function demoTools2026(registry: JobRegistry, store: Task2026Store): Tool2026[] {
  const taskTools = PRESETS.map(({ name, preset, what }) =>
    defineTool({
      name,
      description: `${what} A task when the request declares the tasks extension; otherwise a synchronous run (questions by multi-round-trip).`,
      mode: 'optional',
      schema: demoTaskArgs,
      call: (args, call) => runDemoTask(withDefaults(args, preset), call),
    }),
  );
  const mrtr = defineTool({
    name: 'demo_mrtr',
    description:
      'A multi-round-trip call (SEP-2322): the first call answers resultType "input_required" ' +
      'asking "approval" with a requestState; the retry with inputResponses.approval and that ' +
      'requestState creates a task (or, with then:"complete", answers at once).',
    mode: 'optional',
    schema: mrtrArgs,
    call: async (args, call) => {
      const round = gatherAnswers(APPROVAL, call, MRTR_STATE);
      if ('outcome' in round) return round.outcome;
      if (call.requestState !== MRTR_STATE) {
        return {
          kind: 'error',
          error: invalidParams('requestState must echo the one the input_required result carried'),
        };
      }
      const approved = acceptedContent(round.answers.approval)?.approve === true;
      const structured = { approved, tag: args.tag ?? null };
      const plan: TaskPlan = {
        workMs: args.duration_ms ?? 1000,
        resumeMs: 0,
        finish: () => ({
          status: 'completed',
          result: textResult(JSON.stringify(structured), structured),
        }),
        ttlMs: args.ttl_ms ?? 3_600_000,
        pollIntervalMs: args.poll_interval_ms ?? 500,
        tag: args.tag,
      };
      if (args.then === 'complete') {
        return { kind: 'complete', result: textResult(JSON.stringify(structured), structured) };
      }
      return taskOrSync(plan, call);
    },
  });
  const echo = defineTool({
    name: 'demo_echo',
    description: 'Returns the text at once. Never a task.',
    mode: 'forbidden',
    schema: z.object({ text: z.string().describe('The text to send back.') }),
    call: async ({ text }) => ({ kind: 'complete', result: textResult(text, { text }) }),
  });
  const stats = defineTool({
    name: 'demo_stats',
    description:
      'The same counters as the 2025-11-25 side, plus tasks_2026 and, per tag, the answers ' +
      'accepted per key: proves an answer was delivered at most once.',
    mode: 'forbidden',
    schema: z.object({ tag: z.string().min(1).optional().describe('Only report this tag.') }),
    call: async ({ tag }) => {
      const structured = registry.stats(tag, (name) => store.statusOfTag(name));
      return { kind: 'complete', result: textResult(JSON.stringify(structured), structured) };
    },
  });
  return [...taskTools, mrtr, echo, stats];
}
