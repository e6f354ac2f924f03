import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { DemoContext } from '../demo-context.interface';
import { CONFORMANCE_TOOLS } from './conformance-tools.catalog';
import { demoTools2026 } from './demo-tools-2026.catalog';
import { jobTaskTools2026 } from './job-task-tools-2026.catalog';
import { ordinaryTools } from '../ordinary-tools.registrar';
import { syncTools2026 } from '../sync-tool.registrar';
import { invalidParams, JsonRpcWireError, methodNotFound, tasksExtensionRequired } from '@app/wire';
import { isRecord } from '@app/common';
import { validateRequest2026, type Request2026 } from '@app/wire';
import { createTaskResult, detailedTask } from './task-2026.presenter';
import type { TaskRecord2026 } from './task-2026.types';
import type { Tool2026, ToolOutcome2026 } from './tool-2026.types';
import { toolErrorResult } from './tool-2026.util';
import {
  ErrorCode2026,
  META_SERVER_INFO,
  SUPPORTED_2026_VERSIONS,
  TASKS_EXTENSION,
} from '@app/wire';
import { SERVER_INFO } from './wire-2026.constants';
import { Answer2026Writer, type AnswerSink } from './answer-2026.writer';
import { sseListenSink, type ListenSink } from '../push/listen-sink';

type Result = Record<string, unknown>;

/** Aborted when the client closes the connection before the answer is written. */
function abortOnClose(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * The MCP 2026-07-28 side of the demo server: stateless, one JSON answer per POST (an SSE stream
 * when a tool sends notifications first: Answer2026Writer), written by hand because no SDK
 * release spoke this version when it was written. It serves `server/discover`, `tools/list`,
 * `tools/call` (a result, a multi-round-trip `input_required`, or a task) and the tasks
 * extension's `tasks/get`, `tasks/update` and `tasks/cancel`. Tasks live in the process-wide
 * Task2026Store, so any request (any connection) can reach them.
 */
export class Mcp2026Handler {
  private readonly tools = new Map<string, Tool2026>();

  constructor(private readonly context: DemoContext) {
    const all = [
      ...CONFORMANCE_TOOLS,
      ...demoTools2026(context.registry, context.tasks2026),
      ...jobTaskTools2026(context.registry),
      ...ordinaryTools(context.registry),
      ...syncTools2026(context.registry),
    ];
    for (const tool of all) this.tools.set(tool.name, tool);
  }

  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    // A notification has nothing to answer; the 2026 side acts on none of them.
    if (isRecord(body) && typeof body.method === 'string' && !('id' in body)) {
      res.writeHead(202);
      return void res.end();
    }
    const answer = new Answer2026Writer(res);
    await this.respond(req.headers, body, abortOnClose(res), answer, sseListenSink(res));
  }

  /**
   * One request on any transport: its headers (undefined over stdio, where the body is the only
   * signal), the signal that ends it (the client left, or cancelled it), and where its answer
   * goes. `listenOn`: where a `subscriptions/listen` streams (push/listen-sink.ts).
   */
  async respond(
    headers: IncomingHttpHeaders | undefined,
    body: unknown,
    signal: AbortSignal,
    answer: AnswerSink,
    listenOn?: ListenSink,
  ): Promise<void> {
    const id =
      isRecord(body) && (typeof body.id === 'string' || typeof body.id === 'number')
        ? body.id
        : null;
    try {
      const request = validateRequest2026(headers, body);
      if (request.method === 'subscriptions/listen' && this.context.listen2026 && listenOn) {
        return this.context.listen2026.listen(request, listenOn);
      }
      const result = await this.dispatch(request, signal, answer);
      answer.send(200, { jsonrpc: '2.0', id, result });
    } catch (error) {
      if (signal.aborted) return; // the client left; nobody reads an answer
      if (error instanceof JsonRpcWireError) {
        return answer.send(error.httpStatus, { jsonrpc: '2.0', id, error: error.toJson() });
      }
      process.stderr.write(`demo-server: 2026 request failed: ${String(error)}\n`);
      answer.send(500, {
        jsonrpc: '2.0',
        id,
        error: { code: ErrorCode2026.InternalError, message: 'Internal error' },
      });
    }
  }

  private async dispatch(
    request: Request2026,
    signal: AbortSignal,
    answer: AnswerSink,
  ): Promise<Result> {
    switch (request.method) {
      case 'server/discover':
        return this.discover();
      case 'ping':
        if (this.context.options.noPing) throw methodNotFound('Method not found: ping');
        return { resultType: 'complete' };
      case 'tools/list':
        return { resultType: 'complete', tools: this.listTools(), ttlMs: 0, cacheScope: 'public' };
      case 'tools/call':
        return this.callTool(request, signal, answer);
      case 'tasks/get':
      case 'tasks/update':
      case 'tasks/cancel':
        return this.taskMethod(request);
      case 'tasks/result':
      case 'tasks/list':
        throw methodNotFound(
          `Method not found: ${request.method} does not exist in the tasks extension (tasks/get inlines the result)`,
        );
      default:
        throw methodNotFound(`Method not found: ${request.method}`);
    }
  }

  private discover(): Result {
    return {
      resultType: 'complete',
      supportedVersions: SUPPORTED_2026_VERSIONS,
      capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
      instructions: 'A demo upstream for the MCP Task Gateway: long-running tasks and faults.',
      ttlMs: 0,
      cacheScope: 'public',
      _meta: { [META_SERVER_INFO]: SERVER_INFO },
    };
  }

  private listTools(): Result[] {
    return [...this.tools.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.schema, { io: 'input' }),
    }));
  }

  private async callTool(
    request: Request2026,
    signal: AbortSignal,
    answer: AnswerSink,
  ): Promise<Result> {
    const { params, declaresTasks } = request;
    const name = params.name as string; // the validator checked it against Mcp-Name
    const tool = this.tools.get(name);
    if (!tool) throw invalidParams(`Unknown tool: ${name}`);
    const args = params.arguments ?? {};
    if (!isRecord(args)) throw invalidParams('params.arguments must be an object');
    const inputResponses = params.inputResponses ?? {};
    if (!isRecord(inputResponses)) throw invalidParams('params.inputResponses must be an object');
    const requestState = params.requestState;
    if (requestState !== undefined && typeof requestState !== 'string') {
      throw invalidParams('params.requestState must be a string');
    }
    // params.task (the 2025-11-25 opt-in) is ignored on purpose: here the server decides.
    if (tool.mode === 'required' && !declaresTasks) {
      throw tasksExtensionRequired(
        `Tool ${name} only runs as a task: declare ${TASKS_EXTENSION} in _meta clientCapabilities`,
      );
    }
    const parsed = tool.schema.safeParse(args);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`)
        .join('; ');
      return {
        resultType: 'complete',
        ...toolErrorResult(`Invalid arguments for ${name}: ${problems}`),
      };
    }
    const meta = isRecord(params._meta) ? params._meta : {};
    const token = meta.progressToken;
    const outcome = await tool.call(parsed.data, {
      declaresTasks,
      inputResponses,
      requestState,
      signal,
      ...(typeof token === 'string' || typeof token === 'number' ? { progressToken: token } : {}),
      notify: (method, notification) => answer.notify(method, notification),
    });
    return this.present(outcome, declaresTasks);
  }

  private present(outcome: ToolOutcome2026, declaresTasks: boolean): Result {
    const { registry, tasks2026 } = this.context;
    switch (outcome.kind) {
      case 'complete':
        return { resultType: 'complete', ...outcome.result };
      case 'input_required':
        registry.count('tasks_2026', 'input_required_rounds');
        return {
          resultType: 'input_required',
          inputRequests: outcome.inputRequests,
          ...(outcome.requestState === undefined ? {} : { requestState: outcome.requestState }),
        };
      case 'error':
        throw outcome.error;
      case 'task': {
        if (!declaresTasks)
          throw new Error('a tool made a task for a request without the extension');
        // In memory and synchronous: a tasks/get right after this answer already finds it.
        const task = tasks2026.create(outcome.plan);
        registry.count('tasks_2026', 'creates');
        registry.countTag(outcome.plan.tag, 'submits');
        registry.noteTagTask(outcome.plan.tag, task.taskId);
        return createTaskResult(task, tasks2026.phase(task));
      }
    }
  }

  private taskMethod(request: Request2026): Result {
    const { params, method } = request;
    if (!request.declaresTasks) {
      throw tasksExtensionRequired(
        `${method} needs the ${TASKS_EXTENSION} extension declared in _meta clientCapabilities`,
      );
    }
    const { registry, tasks2026 } = this.context;
    if (method === 'tasks/get') {
      registry.count('tasks_2026', 'gets');
      const task = this.findTask(params.taskId as string);
      return detailedTask(task, tasks2026.phase(task));
    }
    if (method === 'tasks/update') {
      const responses = params.inputResponses;
      if (!isRecord(responses)) throw invalidParams('params.inputResponses must be an object');
      registry.count('tasks_2026', 'updates');
      const task = this.findTask(params.taskId as string);
      const { accepted, ignored } = tasks2026.answer(task, responses);
      for (const key of accepted) {
        registry.count('tasks_2026', 'answers');
        registry.countTagAnswer(task.plan.tag, key);
      }
      for (let i = 0; i < ignored.length; i += 1) registry.count('tasks_2026', 'ignored_answers');
      return { resultType: 'complete' };
    }
    registry.count('tasks_2026', 'cancels');
    const task = this.findTask(params.taskId as string);
    registry.countTag(task.plan.tag, 'cancels');
    tasks2026.cancel(task);
    return { resultType: 'complete' };
  }

  /** -32602 for an unknown or expired task, worded as the extension's examples word it. */
  private findTask(taskId: string): TaskRecord2026 {
    const task = this.context.tasks2026.get(taskId);
    if (!task) throw invalidParams('Failed to retrieve task: Task not found');
    return task;
  }
}
