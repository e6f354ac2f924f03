import { Inject, Injectable } from '@nestjs/common';
import { isTerminal, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { TaskRow } from '@app/persistence';
import { Principal } from '../../auth/token-verifier.service';
import { parseInputRequestId } from '../input-request.id';
import { JsonRpcWireError, invalidParams, methodNotFound } from '@app/wire';
import { NotFound, TaskEnded } from '../../refusals/refusal';
import { McpCall } from '../mcp-call.context';
import { McpTaskAccess } from '../mcp-task-access.service';
import { legacyTask, toolResult } from '../mcp-task.view';
import { McpToolCalls } from '../mcp-tool-calls.service';
import { McpToolsService } from '../mcp-tools.service';
import { McpWaitSlots } from '../mcp-wait-slots';
import { SERVER_INFO } from '../server-info';
import { RELATED_TASK, waitRelayingQuestions } from '../task-questions.relay';

/** Revisions of the initialize handshake this side answers; the first is the newest. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];
const LIST_LIMIT = 100;

/** An unknown task, or another user's (refusal-errors.ts words it as the tasks design does). */
const notFound = (): NotFound => new NotFound('No such task.');

/**
 * The 2025-11-25 side (the tasks design of SEP-1686): `initialize` with the `tasks` capability,
 * task-augmented `tools/call` answering `CreateTaskResult`, `tasks/get`, `tasks/result`,
 * `tasks/list` (the caller's tasks) and `tasks/cancel`. Stateless: a task is bound to the
 * caller's identity, not to a session, so any replica answers for it.
 */
@Injectable()
export class Mcp2025Handler {
  private readonly holdMs: number;

  constructor(
    @Inject(SETTINGS) settings: Settings,
    private readonly tools: McpToolsService,
    private readonly calls: McpToolCalls,
    private readonly access: McpTaskAccess,
    private readonly slots: McpWaitSlots,
  ) {
    this.holdMs = settings.mcp.maxHoldMs;
  }

  async handle(call: McpCall): Promise<Record<string, unknown>> {
    switch (call.method) {
      case 'initialize':
        return this.initialize(call.params);
      case 'ping':
        return {};
      case 'tools/list':
        return this.listTools();
      case 'tools/call':
        return this.callTool(call);
      case 'tasks/get':
        return legacyTask(await this.task(call), this.access.timing);
      case 'tasks/result':
        return this.result(call);
      case 'tasks/list':
        return this.list(call);
      case 'tasks/cancel':
        return this.cancel(call);
      default:
        throw methodNotFound(`Method not found: ${call.method}`);
    }
  }

  private initialize(params: Record<string, unknown>): Record<string, unknown> {
    const asked = params.protocolVersion;
    const version =
      typeof asked === 'string' && LEGACY_VERSIONS.includes(asked) ? asked : LEGACY_VERSIONS[0];
    return {
      protocolVersion: version,
      capabilities: {
        tools: { listChanged: false },
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      serverInfo: SERVER_INFO,
      instructions:
        'Each tool runs as a durable gateway task. Call with task augmentation to get a task ' +
        'at once and poll it; a call without it waits for the result.',
    };
  }

  private async listTools(): Promise<Record<string, unknown>> {
    const tools = (await this.tools.listed()).map(({ mode, ...tool }) => ({
      ...tool,
      execution: { taskSupport: mode ?? 'forbidden' },
    }));
    return { tools };
  }

  private async callTool(call: McpCall): Promise<Record<string, unknown>> {
    const name = call.params.name;
    if (typeof name !== 'string') throw invalidParams('params.name must be a string');
    const tool = await this.tools.find(name);
    if (!tool) throw invalidParams(`Unknown tool: ${name}`);
    const asTask = call.params.task !== undefined;
    if (asTask && !isRecord(call.params.task)) throw invalidParams('params.task must be an object');
    if (tool.kind !== 'toolset') {
      if (asTask) throw methodNotFound(`Tool ${name} does not support task augmentation`);
      return tool.kind === 'start'
        ? this.calls.start(call, tool.entry)
        : this.calls.companion(call, tool.action);
    }
    if (asTask && tool.mode === 'forbidden') {
      throw methodNotFound(`Tool ${name} does not support task augmentation`);
    }
    if (!asTask && tool.mode === 'required') {
      throw methodNotFound(`Tool ${name} requires task augmentation (params.task)`);
    }
    if (!asTask) return this.calls.hold(call, tool.entry, 'tasks/get (and tasks/result)');
    const task = await this.calls.create(call, tool.entry);
    return { task: legacyTask(task, this.access.timing) };
  }

  private async task(call: McpCall) {
    const taskId = call.params.taskId;
    if (typeof taskId !== 'string') throw invalidParams('params.taskId must be a string');
    const row = await this.access.find(call.principal.userId, taskId);
    if (!row) throw notFound();
    return row;
  }

  /**
   * Blocks until the task ends (bounded like a held call), then answers its tool result; the
   * task's questions meanwhile go to the client, with the related-task `_meta`.
   */
  private async result(call: McpCall): Promise<Record<string, unknown>> {
    const task = await this.task(call);
    const release = this.slots.acquire(call.principal.userId, 'resultWaits', call.abort);
    let row: TaskRow;
    try {
      row = await waitRelayingQuestions(this.access, task, call, this.holdMs, true);
    } finally {
      release();
    }
    if (!isTerminal(row.status)) {
      throw new JsonRpcWireError(-32000, `Task ${row.id} has not ended yet; poll tasks/get`);
    }
    const result = toolResult(row);
    const meta = isRecord(result._meta) ? result._meta : {};
    return { ...result, _meta: { ...meta, [RELATED_TASK]: { taskId: row.id } } };
  }

  /**
   * A client's answer to a question sent on `tasks/result`, stored through the durable path of
   * `POST /v1/…/input` (validated against the open question; a key answered already, or no
   * longer open, is ignored). An error response leaves the question open for another answer.
   */
  async clientResponse(principal: Principal, id: string | number, result: unknown): Promise<void> {
    const ref = parseInputRequestId(id);
    if (!ref) throw invalidParams('This is not an answer to a request this server sent');
    if (result === undefined) return;
    const row = await this.access.find(principal.userId, ref.taskId);
    if (!row) throw notFound();
    await this.access.answer(row, { [ref.key]: result });
  }

  private async list(call: McpCall): Promise<Record<string, unknown>> {
    const cursor = call.params.cursor;
    if (cursor !== undefined && typeof cursor !== 'string') {
      throw invalidParams('params.cursor must be a string');
    }
    const page = await this.access.list(call.principal.userId, LIST_LIMIT, { cursor });
    return {
      tasks: page.rows.map((row) => legacyTask(row, this.access.timing)),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    };
  }

  /** 2025-11-25: cancelling a task that has already ended is -32602. */
  private async cancel(call: McpCall): Promise<Record<string, unknown>> {
    const current = await this.task(call);
    if (isTerminal(current.status)) {
      throw new TaskEnded(current.status);
    }
    const row = await this.access.cancel(call.principal.userId, current.id);
    if (!row) throw notFound();
    return legacyTask(row, this.access.timing);
  }
}
