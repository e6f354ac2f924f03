import { Inject, Injectable } from '@nestjs/common';
import { isTerminal } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { CatalogEntry, TaskRow } from '@app/persistence';
import { invalidParams, isRecord } from '@app/mcp-wire';
import { inputRequiredView } from '@app/views';
import { COMPANION_TOOLS } from './companion-tools';
import { McpCall, argumentsOf, submitError, threadOf } from './mcp-call.context';
import { McpTaskAccess } from './mcp-task-access.service';
import { ToolResult, legacyTask, toolResult } from './mcp-task.view';
import { waitRelayingQuestions } from './task-questions.relay';

/**
 * What a `tools/call` does in either era, short of the era's own wrapping: create the task, hold
 * a call without a task until the task ends, and the companion tools.
 */
@Injectable()
export class McpToolCalls {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly access: McpTaskAccess,
  ) {}

  /** Stores the task for the call; a refused submit is a JSON-RPC error naming why. */
  async create(call: McpCall, entry: CatalogEntry): Promise<TaskRow> {
    const args = argumentsOf(call.params);
    const threadId = threadOf(call, this.settings.mcp.defaultThread);
    try {
      return await this.access.create({
        userId: call.principal.userId,
        tenant: call.principal.tenant,
        threadId,
        toolset: entry.name,
        arguments: args,
      });
    } catch (error) {
      throw submitError(error);
    }
  }

  /**
   * A call without a task: the task is created, then the answer is held until it ends. Its
   * questions meanwhile go to a 2025-11-25 client that accepts an SSE answer, as requests of
   * this call (elicitation during a tool call, as any server does). A client that goes away
   * (or cancels the request) cancels the task; one still running at the hold limit is left
   * running, and the answer says where to find it.
   */
  async hold(call: McpCall, entry: CatalogEntry): Promise<ToolResult> {
    const task = await this.create(call, entry);
    const maxMs = this.settings.mcp.maxHoldMs;
    const ended = await waitRelayingQuestions(this.access, task, call, maxMs, false);
    if (isTerminal(ended.status)) return toolResult(ended);
    if (call.abort.aborted) {
      await this.access.cancel(call.principal.userId, task.id);
      return { content: [{ type: 'text', text: 'The call was cancelled.' }], isError: true };
    }
    const seconds = Math.round(this.settings.mcp.maxHoldMs / 1000);
    const why = this.access.closing
      ? 'still running, and the gateway replica holding this call is shutting down'
      : `still running after ${seconds} s`;
    return {
      content: [
        {
          type: 'text',
          text:
            `The task ${task.id} is ${why}; it continues durably. ` +
            `Read it with tasks/get, ${COMPANION_TOOLS.get.name}, or GET /v1/threads/${task.threadId}/tasks/${task.id}.`,
        },
      ],
      structuredContent: { task_id: task.id, status: ended.status },
      isError: true,
    };
  }

  /** A start tool: the task is stored and its ID answered at once. */
  async start(call: McpCall, entry: CatalogEntry): Promise<ToolResult> {
    const task = await this.create(call, entry);
    return summaryResult(
      task,
      `Started task ${task.id}. Read it with ${COMPANION_TOOLS.get.name}.`,
      this.access,
    );
  }

  /** The shared companion tools: get, answer, cancel, list the caller's tasks. */
  async companion(call: McpCall, action: keyof typeof COMPANION_TOOLS): Promise<ToolResult> {
    const args = argumentsOf(call.params);
    const userId = call.principal.userId;
    if (action === 'list') {
      const status = args.status;
      if (status !== undefined && status !== 'active' && status !== 'terminal') {
        throw invalidParams('status must be "active" or "terminal"');
      }
      const page = await this.access.list(userId, 50, { status });
      const tasks = page.rows.map((row) => legacyTask(row, this.access.timing));
      return {
        content: [{ type: 'text', text: JSON.stringify(tasks) }],
        structuredContent: { tasks },
      };
    }
    const taskId = args.task_id;
    if (typeof taskId !== 'string') throw invalidParams('task_id must be a string');
    const row =
      action === 'cancel'
        ? await this.access.cancel(userId, taskId)
        : await this.access.find(userId, taskId);
    if (!row) {
      return { content: [{ type: 'text', text: `No task ${taskId}.` }], isError: true };
    }
    if (action === 'answer') {
      if (!isRecord(args.responses)) throw invalidParams('responses must be an object');
      const stored = await this.access.answer(row, args.responses);
      const fresh = (await this.access.find(userId, taskId)) ?? row;
      return summaryResult(
        fresh,
        stored
          ? `Answers stored for task ${row.id}; they reach the upstream shortly.`
          : `Nothing stored: task ${row.id} has no open question with those keys.`,
        this.access,
      );
    }
    if (action === 'get' && isTerminal(row.status)) {
      const result = toolResult(row);
      return {
        ...result,
        structuredContent: {
          ...legacyTask(row, this.access.timing),
          result: result.structuredContent ?? result.content,
        },
      };
    }
    return summaryResult(row, `Task ${row.id} is ${row.status}.`, this.access);
  }
}

function summaryResult(row: TaskRow, text: string, access: McpTaskAccess): ToolResult {
  const task = legacyTask(row, access.timing);
  const question = inputRequiredView(row)?.requests;
  return {
    content: [{ type: 'text', text }],
    structuredContent: {
      ...task,
      task_id: row.id,
      ...(question === undefined ? {} : { input_required: question }),
    },
  };
}
