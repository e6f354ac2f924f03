import { z } from 'zod';
import type { TaskPlan } from './task-2026.types';
import { defineTool, type Tool2026 } from './tool-2026.types';
import { ErrorCode2026 } from '@app/wire';
import {
  acceptedContent,
  ask,
  DEFAULT_TTL_MS,
  gatherAnswers,
  taskOrSync,
  textResult,
  toolErrorResult,
} from './tool-2026.util';

/** Fixture tasks poll fast: the suite polls every 200 ms and gives a task 10 s to finish. */
const FIXTURE_POLL_MS = 100;
/** Questions come a moment after creation, so the CreateTaskResult itself says `working`. */
const ASK_AFTER_MS = 100;

function plan(partial: Pick<TaskPlan, 'workMs' | 'finish'> & Partial<TaskPlan>): TaskPlan {
  return { resumeMs: 0, ttlMs: DEFAULT_TTL_MS, pollIntervalMs: FIXTURE_POLL_MS, ...partial };
}

const confirmQuestion = (filename: string) =>
  ask(`Delete ${filename}? This cannot be undone.`, 'confirm', {
    type: 'boolean',
    title: 'Delete',
  });

function deleteVerdict(filename: string, answer: unknown): string {
  const content = acceptedContent(answer);
  return content && content.confirm !== false ? `Deleted ${filename}.` : `Kept ${filename}.`;
}

const MULTI_QUESTIONS = {
  name: ask('What name should the report carry?', 'name', { type: 'string', title: 'Name' }),
  confirm: ask('Send the report when it is ready?', 'confirm', { type: 'boolean', title: 'Send' }),
};

function multiVerdict(answers: Record<string, unknown>): string {
  const name = acceptedContent(answers.name)?.name;
  const confirm = acceptedContent(answers.confirm)?.confirm;
  return `Report for ${typeof name === 'string' ? name : '(no name)'}; send: ${confirm === true}.`;
}

const USER_NAME_QUESTION = {
  user_name: ask('What is your name?', 'name', { type: 'string', title: 'Name' }),
};

/**
 * The fixture tools the conformance suite's `tasks-*` scenarios call by exact name, behaving
 * as docs/demo-server.md describes. `failing_job` and `test_tool_with_task` are `required`
 * (the suite checks -32021 on `failing_job`); `greet` never makes a task.
 */
export const CONFORMANCE_TOOLS: Tool2026[] = [
  defineTool({
    name: 'greet',
    description: 'Answers "Hello, {name}!" at once. Never a task (task mode: forbidden).',
    mode: 'forbidden',
    schema: z.object({ name: z.string().describe('Who to greet.') }),
    call: async ({ name }) => ({ kind: 'complete', result: textResult(`Hello, ${name}!`) }),
  }),
  defineTool({
    name: 'slow_compute',
    description:
      'Sleeps `seconds` then returns a result. As a task when the request declares tasks; ' +
      '`seconds: 0` answers at once without a task. Honours tasks/cancel (ends cancelled).',
    mode: 'optional',
    schema: z.object({
      seconds: z.number().min(0).max(86_400).describe('How long to compute.'),
      label: z.string().max(200).optional().describe('A label echoed in the result.'),
    }),
    call: async ({ seconds, label }, call) => {
      const text = `Computed ${label ?? 'result'} after ${seconds}s.`;
      if (seconds === 0) return { kind: 'complete', result: textResult(text) };
      return taskOrSync(
        plan({
          workMs: Math.round(seconds * 1000),
          finish: () => ({ status: 'completed', result: textResult(text) }),
        }),
        call,
      );
    },
  }),
  defineTool({
    name: 'failing_job',
    description:
      'A task that ends after about 1 s with a tool error: status completed, result.isError ' +
      'true. Task mode required: without the tasks extension the call gets -32021.',
    mode: 'required',
    schema: z.object({}),
    call: async (_args, call) =>
      taskOrSync(
        plan({
          workMs: 1000,
          finish: () => ({
            status: 'completed',
            result: toolErrorResult('failing_job failed as designed: a tool execution error.'),
          }),
        }),
        call,
      ),
  }),
  defineTool({
    name: 'protocol_error_job',
    description:
      'A task that ends after 0.5 s with a protocol error: status failed, error -32603. ' +
      'Without the tasks extension the call itself answers that JSON-RPC error.',
    mode: 'optional',
    schema: z.object({}),
    call: async (_args, call) =>
      taskOrSync(
        plan({
          workMs: 500,
          finish: () => ({
            status: 'failed',
            error: {
              code: ErrorCode2026.InternalError,
              message: 'protocol_error_job failed as designed: internal error.',
            },
          }),
        }),
        call,
      ),
  }),
  defineTool({
    name: 'confirm_delete',
    description:
      'Asks one question (key "confirm": delete the file?) and completes with the verdict. ' +
      'As a task: input_required until tasks/update answers it. Without the tasks extension: ' +
      'a multi-round-trip call (resultType input_required, then the retry with inputResponses).',
    mode: 'optional',
    schema: z.object({ filename: z.string().max(1000).describe('The file to delete.') }),
    call: async ({ filename }, call) => {
      const questions = { confirm: confirmQuestion(filename) };
      if (!call.declaresTasks) {
        const round = gatherAnswers(questions, call);
        if ('outcome' in round) return round.outcome;
        return {
          kind: 'complete',
          result: textResult(deleteVerdict(filename, round.answers.confirm)),
        };
      }
      return {
        kind: 'task',
        plan: plan({
          workMs: ASK_AFTER_MS,
          questions,
          finish: (answers) => ({
            status: 'completed',
            result: textResult(deleteVerdict(filename, answers.confirm)),
          }),
        }),
      };
    },
  }),
  defineTool({
    name: 'multi_input',
    description:
      'Asks two questions at once (keys "name" and "confirm"); stays input_required until ' +
      'both are answered (partial answers leave the other key pending), then completes.',
    mode: 'optional',
    schema: z.object({}),
    call: async (_args, call) => {
      if (!call.declaresTasks) {
        const round = gatherAnswers(MULTI_QUESTIONS, call);
        if ('outcome' in round) return round.outcome;
        return { kind: 'complete', result: textResult(multiVerdict(round.answers)) };
      }
      return {
        kind: 'task',
        plan: plan({
          workMs: ASK_AFTER_MS,
          questions: MULTI_QUESTIONS,
          finish: (answers) => ({ status: 'completed', result: textResult(multiVerdict(answers)) }),
        }),
      };
    },
  }),
  defineTool({
    name: 'test_tool_with_task',
    description:
      'Multi-round-trip then task: the first call answers resultType input_required asking ' +
      '"user_name"; the retry with inputResponses.user_name creates a task whose result greets ' +
      'that name. Task mode required.',
    mode: 'required',
    schema: z.object({}),
    call: async (_args, call) => {
      const round = gatherAnswers(USER_NAME_QUESTION, call);
      if ('outcome' in round) return round.outcome;
      const content = acceptedContent(round.answers.user_name);
      const name = content?.name ?? content?.user_name;
      const text = typeof name === 'string' ? `Hello, ${name}!` : 'Hello, whoever you are!';
      return {
        kind: 'task',
        plan: plan({
          workMs: 300,
          finish: () => ({ status: 'completed', result: textResult(text) }),
        }),
      };
    },
  }),
];
