import { Injectable } from '@nestjs/common';
import { isRecord } from '@app/common';
import {
  META_SERVER_INFO,
  SUPPORTED_2026_VERSIONS,
  TASKS_EXTENSION,
  invalidParams,
  methodNotFound,
  tasksExtensionRequired,
} from '@app/wire';
import { NotFound } from '../../refusals/refusal';
import { McpCall } from '../mcp-call.context';
import { McpTaskAccess } from '../mcp-task-access.service';
import { detailedTask } from '../mcp-task.view';
import { McpRounds } from './mcp-rounds.service';
import { McpToolCalls } from '../mcp-tool-calls.service';
import { McpToolsService } from '../mcp-tools.service';
import { SERVER_INFO } from '../server-info';

/** One 2026 call: the request and whether it declared the tasks extension. */
export interface Call2026 extends McpCall {
  declaresTasks: boolean;
}

const COMPLETE = { resultType: 'complete' } as const;

/**
 * The 2026-07-28 side with the tasks extension (SEP-2663), stateless: `server/discover`,
 * `tools/call` answering a flat `CreateTaskResult` to a declaring request, `tasks/get`
 * (`DetailedTask`), `tasks/update` and `tasks/cancel` (empty acks). The envelope and headers are
 * checked before this runs (validateRequest2026).
 */
@Injectable()
export class Mcp2026Handler {
  constructor(
    private readonly tools: McpToolsService,
    private readonly calls: McpToolCalls,
    private readonly access: McpTaskAccess,
    private readonly rounds: McpRounds,
  ) {}

  async handle(call: Call2026): Promise<Record<string, unknown>> {
    switch (call.method) {
      case 'server/discover':
        return this.discover();
      case 'ping':
        return { ...COMPLETE };
      case 'tools/list':
        return this.listTools();
      case 'tools/call':
        return this.callTool(call);
      case 'tasks/get':
        return this.get(call);
      case 'tasks/update':
        return this.update(call);
      case 'tasks/cancel':
        return this.cancel(call);
      default:
        // tasks/result and tasks/list are gone from this design: -32601 like any unknown method.
        throw methodNotFound(`Method not found: ${call.method}`);
    }
  }

  private discover(): Record<string, unknown> {
    return {
      ...COMPLETE,
      supportedVersions: SUPPORTED_2026_VERSIONS,
      capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } },
      ttlMs: 0,
      cacheScope: 'public',
      _meta: { [META_SERVER_INFO]: SERVER_INFO },
    };
  }

  private async listTools(): Promise<Record<string, unknown>> {
    // The 2026 wire has no task hint per tool: the server decides per call.
    const tools = (await this.tools.listed()).map(({ mode: _mode, ...tool }) => tool);
    // A cacheable result on this revision (ttlMs and cacheScope are required; the SDK v2 client
    // refuses the list without them): stale at once, since availability changes with the
    // catalog, and private, since it is answered to an authenticated caller.
    return { ...COMPLETE, tools, ttlMs: 0, cacheScope: 'private' };
  }

  /**
   * The server decides: a declaring request to a tool that may run as a task gets the task;
   * otherwise the call is held and answers the tool's result. `params.task` (the older design's
   * opt-in) is ignored, as the extension requires.
   */
  private async callTool(call: Call2026): Promise<Record<string, unknown>> {
    const name = call.params.name as string;
    const tool = await this.tools.find(name);
    if (!tool) throw invalidParams(`Unknown tool: ${name}`);
    if (tool.kind === 'start')
      return { ...COMPLETE, ...(await this.calls.start(call, tool.entry)) };
    if (tool.kind === 'companion') {
      return { ...COMPLETE, ...(await this.calls.companion(call, tool.action)) };
    }
    if (!call.declaresTasks && tool.mode === 'required') {
      throw tasksExtensionRequired(`Tool ${name} runs only as a task: declare ${TASKS_EXTENSION}`);
    }
    if (call.declaresTasks && tool.mode !== 'forbidden') {
      const outcome = await this.rounds.taskOrRound(call, tool.entry);
      if ('round' in outcome) return outcome.round;
      const row = outcome.task;
      const {
        result: _r,
        error: _e,
        inputRequests: _i,
        ...task
      } = detailedTask(row, this.access.timing);
      return { ...task, resultType: 'task' };
    }
    return { ...COMPLETE, ...(await this.calls.hold(call, tool.entry, 'tasks/get')) };
  }

  private async row(call: Call2026) {
    if (!call.declaresTasks) {
      throw tasksExtensionRequired(
        `${call.method} needs the ${TASKS_EXTENSION} extension declared`,
      );
    }
    const row = await this.access.find(call.principal.userId, call.params.taskId as string);
    if (!row) throw new NotFound('No such task.');
    return row;
  }

  private async get(call: Call2026): Promise<Record<string, unknown>> {
    return { ...COMPLETE, ...detailedTask(await this.row(call), this.access.timing) };
  }

  /**
   * Answers keyed by input request, stored through the durable path of `POST /v1/…/input`; an
   * empty ack either way (keys that are not open are ignored, partial answers are fine).
   */
  private async update(call: Call2026): Promise<Record<string, unknown>> {
    const row = await this.row(call);
    const responses = call.params.inputResponses ?? {};
    if (!isRecord(responses)) throw invalidParams('params.inputResponses must be an object');
    await this.access.answer(row, responses);
    return { ...COMPLETE };
  }

  /** Cancelling is durable and idempotent; a task that has ended gets the same empty ack. */
  private async cancel(call: Call2026): Promise<Record<string, unknown>> {
    const row = await this.row(call);
    await this.access.cancel(call.principal.userId, row.id);
    return { ...COMPLETE };
  }
}
