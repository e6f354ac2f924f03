import { Inject, Injectable } from '@nestjs/common';
import { isTerminal, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { CatalogEntry, TaskRow } from '@app/persistence';
import { invalidParams } from '@app/wire';
import { inputRequiredView } from '@app/views';
import { COMPANION_TOOLS } from './companion-tools';
import { McpCall, argumentsOf, idempotencyKeyOf, threadOf } from './mcp-call.context';
import { McpTaskAccess } from './mcp-task-access.service';
import { ToolResult, legacyTask, mcpStatus, toolResult } from './mcp-task.view';
import { McpToolsService } from './mcp-tools.service';
import { McpWaitSlots } from './mcp-wait-slots';
import { waitRelayingQuestions } from './task-questions.relay';

/** How a client of the call's era reads a task by its ID, as the held call's answer names it. */
export type TaskReadMethods = 'tasks/get (and tasks/result)' | 'tasks/get';

/**
 * What a `tools/call` does in either era, short of the era's own wrapping: create the task, hold
 * a call without a task until the task ends, and the companion tools.
 */
@Injectable()
export class McpToolCalls {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly access: McpTaskAccess,
    private readonly tools: McpToolsService,
    private readonly slots: McpWaitSlots,
  ) {}

  /** Stores the task for the call; a refused submit throws its refusal (refusal-errors.ts). */
  async create(call: McpCall, entry: CatalogEntry): Promise<TaskRow> {
    const args = argumentsOf(call.params);
    const threadId = threadOf(call, this.settings.mcp.defaultThread);
    const idempotencyKey = idempotencyKeyOf(call);
    return this.access.create({
      userId: call.principal.userId,
      tenant: call.principal.tenant,
      threadId,
      toolset: entry.name,
      arguments: args,
      idempotencyKey,
    });
  }

  /**
   * A call without a task: the task is created, then the answer is held until it ends, at most
   * MCP_MAX_HOLD_MS (under the 60 s an SDK client waits by default), sending progress meanwhile
   * when the request carries a `progressToken`. Its questions go to a 2025-11-25 client that
   * accepts an SSE answer, as requests of this call. A task still running when the hold ends
   * (the limit, the replica shutting down, or the client giving up) goes on: the answer is a
   * result naming it and how to reach it. A client giving up cancels the task too only where the
   * toolset's `mcp.clientCancel` is `task` (docs/mcp.md, "Held calls"). `readBy` is how the
   * era's client reads a task: `tasks/get` and `tasks/result` on 2025-11-25, `tasks/get` alone
   * on 2026-07-28 (its result inlined; `tasks/result` is gone there).
   */
  async hold(call: McpCall, entry: CatalogEntry, readBy: TaskReadMethods): Promise<ToolResult> {
    const release = this.slots.acquire(call.principal.userId, 'heldCalls', call.abort);
    try {
      const task = await this.create(call, entry);
      const stopProgress = this.sendProgress(call, task);
      let ended: TaskRow;
      try {
        const maxMs = this.settings.mcp.maxHoldMs;
        ended = await waitRelayingQuestions(this.access, task, call, maxMs, false);
      } finally {
        stopProgress();
      }
      if (isTerminal(ended.status)) return toolResult(ended);
      if (call.abort.aborted && entry.mcp?.clientCancel === 'task') {
        await this.access.cancel(call.principal.userId, task.id);
        return {
          content: [{ type: 'text', text: `The call was cancelled, and so was task ${task.id}.` }],
          isError: true,
        };
      }
      const why = call.abort.aborted
        ? 'the client gave up on this call'
        : this.access.closing
          ? 'the gateway replica holding this call is shutting down'
          : `it has run longer than this call may be held (${Math.round(this.settings.mcp.maxHoldMs / 1000)} s)`;
      return this.stillRunning(ended, why, readBy);
    } finally {
      release();
    }
  }

  /**
   * The answer to a held call whose task goes on: a result, not an error (nothing failed), that
   * names the task and every way to reach it, in text for a model and in `structuredContent`.
   */
  private async stillRunning(
    row: TaskRow,
    why: string,
    readBy: TaskReadMethods,
  ): Promise<ToolResult> {
    const getTool = COMPANION_TOOLS.get.name;
    const offered = (await this.tools.find(getTool))?.kind === 'companion';
    const path = `/v1/threads/${row.threadId}/tasks/${row.id}`;
    const ways = [
      ...(offered ? [`call ${getTool} with {"task_id": "${row.id}"}`] : []),
      `${readBy} with taskId "${row.id}"`,
      `GET ${path} on the gateway's HTTP API`,
    ];
    const status = mcpStatus(row);
    return {
      content: [
        {
          type: 'text',
          text:
            `Not finished yet: task ${row.id} is still ${status} (${why}). It goes on ` +
            `durably, and its result stays readable: ${ways.join('; or ')}.`,
        },
      ],
      structuredContent: {
        task_id: row.id,
        status,
        thread_id: row.threadId,
        result_path: path,
        ...(offered ? { companion_tool: getTool } : {}),
      },
    };
  }

  /**
   * While a call is held, `notifications/progress` every MCP_PROGRESS_INTERVAL_MS when its
   * request carries a `progressToken` and its client takes an SSE answer: a client that resets
   * its timeout on progress keeps waiting. `progress` is the milliseconds held (it must grow).
   */
  private sendProgress(call: McpCall, task: TaskRow): () => void {
    const meta = call.params._meta;
    const token = isRecord(meta) ? meta.progressToken : undefined;
    const channel = call.channel;
    if ((typeof token !== 'string' && typeof token !== 'number') || !channel?.canStream) {
      return () => undefined;
    }
    const started = Date.now();
    const timer = setInterval(() => {
      const held = Date.now() - started;
      channel.send({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: held,
          message: `Task ${task.id} is running (${Math.round(held / 1000)} s).`,
        },
      });
    }, this.settings.mcp.progressIntervalMs);
    return () => clearInterval(timer);
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
