import { randomBytes } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { jobArgsShape, ORDINARY_FAULTS } from './job-args.schema';
import type { JobRegistry } from './job.registry';
import { faultDetail } from './job-result.util';
import { defineTool, type Tool2026 } from './mcp-2026/tool-2026.types';
import { breakStatusAnswer, notFoundAnswer, ordinaryAnswer } from './ordinary-status.mapper';
import { crashNow, hangUntilAborted, structuredResult, toolError } from './tool-result.util';

const taskIdSchema = z.object({
  task_id: z.string().min(1).describe('The task_id that demo_submit returned.'),
});

const submitSchema = z.object({
  ...jobArgsShape,
  fault: z
    .enum(ORDINARY_FAULTS)
    .optional()
    .describe('Makes this job misbehave in one way; see docs/demo-server.md.'),
});

/** 300 chars: over the 255-char bound on remote task IDs in contracts.md. */
function longTaskId(): string {
  return `job_${randomBytes(12).toString('hex')}`.padEnd(300, 'x');
}

/**
 * The `ordinary` contract on the session side: the tools of `ordinaryTools`, each answering with
 * its result (docs/demo-server.md).
 */
export function registerOrdinaryTools(server: McpServer, registry: JobRegistry): void {
  for (const tool of ordinaryTools(registry)) {
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: tool.schema.shape },
      async (args: Record<string, unknown>, extra) => {
        const call = {
          declaresTasks: false,
          inputResponses: {},
          signal: extra.signal,
          notify: () => undefined,
        };
        const outcome = await tool.call(args, call);
        if (outcome.kind !== 'complete') throw new Error(`${tool.name} answered ${outcome.kind}`);
        return outcome.result;
      },
    );
  }
}

/**
 * The `ordinary` contract: three plain tools (submit, status, cancel) whose structuredContent
 * follows contracts.md exactly unless the job was submitted with a `fault`. Both eras serve them:
 * on the 2026-07-28 side they are task mode `forbidden`, each call answered with its result.
 */
export function ordinaryTools(registry: JobRegistry): Tool2026[] {
  const complete = (result: CallToolResult) => ({ kind: 'complete' as const, result });
  return [
    defineTool({
      name: 'demo_submit',
      description:
        'Starts a demo background job and returns at once with {task_id, status: "running"}. ' +
        'Poll it with demo_status and stop it with demo_cancel. The arguments shape the job ' +
        '(how long it runs, how it ends, what it returns) and can inject one fault.',
      mode: 'forbidden',
      schema: submitSchema,
      call: async (args, { signal }) => complete(await submit(registry, args, signal)),
    }),
    defineTool({
      name: 'demo_status',
      description:
        'Reports the state of a demo job: running, input_required, completed (with result), ' +
        'failed (with error) or cancelled. Unknown IDs answer error_code "task_not_found".',
      mode: 'forbidden',
      schema: taskIdSchema,
      call: async ({ task_id }, { signal }) => complete(await status(registry, task_id, signal)),
    }),
    defineTool({
      name: 'demo_cancel',
      description:
        'Cancels a running demo job and returns {task_id, status} with its real final state: a ' +
        'job that already finished stays completed or failed. Safe to call more than once.',
      mode: 'forbidden',
      schema: taskIdSchema,
      call: async ({ task_id }) => complete(cancel(registry, task_id)),
    }),
  ];
}

async function submit(
  registry: JobRegistry,
  args: z.infer<typeof submitSchema>,
  signal: AbortSignal,
): Promise<CallToolResult> {
  // Counted before any fault acts, so tests can prove a submit reached the server exactly once.
  registry.count('ordinary', 'submits');
  registry.countTag(args.tag, 'submits');
  switch (args.fault) {
    case 'crash_submit':
      return crashNow('crash_submit');
    case 'hang_submit':
      return hangUntilAborted(signal);
    case 'error_submit':
      return toolError(
        faultDetail(args, 'The demo server refused this submit (fault error_submit).'),
      );
  }
  const job = registry.create(
    'ordinary',
    args,
    args.fault === 'long_task_id' ? longTaskId() : undefined,
  );
  if (args.fault === 'bad_submit_shape') return structuredResult({ id: job.id, state: 'running' });
  if (args.fault === 'text_only_submit') {
    return {
      content: [{ type: 'text', text: `Submitted demo job ${job.id}; it is running.` }],
    };
  }
  return structuredResult({ task_id: job.id, status: 'running' });
}

async function status(
  registry: JobRegistry,
  task_id: string,
  signal: AbortSignal,
): Promise<CallToolResult> {
  registry.count('ordinary', 'status_calls');
  const job = registry.get(task_id);
  if (!job || job.contract !== 'ordinary') return structuredResult(notFoundAnswer(task_id));
  switch (job.args.fault) {
    case 'crash_status':
      return crashNow('crash_status');
    case 'hang_status':
      return hangUntilAborted(signal);
    case 'error_status':
      return toolError(
        faultDetail(job.args, 'The demo server failed to read the status (fault error_status).'),
      );
    case 'nul_error_status':
      return toolError('The demo server failed to read the status\u0000(nul_error_status).');
  }
  const answer = ordinaryAnswer(job, registry.phase(job));
  return structuredResult(breakStatusAnswer(answer, job.args.fault));
}

function cancel(registry: JobRegistry, task_id: string): CallToolResult {
  registry.count('ordinary', 'cancels');
  const job = registry.get(task_id);
  if (!job || job.contract !== 'ordinary') return structuredResult(notFoundAnswer(task_id));
  registry.countTag(job.args.tag, 'cancels');
  if (job.args.fault === 'error_cancel') {
    return toolError(
      faultDetail(job.args, 'The demo server failed to cancel (fault error_cancel).'),
    );
  }
  const {
    task_id: id,
    status,
    result,
    result_artifact,
    error,
  } = ordinaryAnswer(job, registry.cancel(job));
  return structuredResult({ task_id: id, status, result, result_artifact, error });
}
