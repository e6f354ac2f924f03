import {
  Contract,
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
  type TaskSnapshot,
  isRecord,
} from '@app/common';
import {
  UpstreamRpcError,
  UpstreamSessionExpiredError,
  type UpstreamPort,
  type UpstreamSession,
} from '@app/upstream';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type {
  AnswerOutcome,
  ContractDriver,
  DriverContext,
  PendingAnswers,
  SubmitOutcome,
} from './contract-driver';
import { requireRemoteId, toolArguments, toolsetOf } from './driver-context';
import { protocolError } from './driver.errors';
import {
  parseCreateTaskReply,
  parseTask,
  resultSnapshot,
  taskSnapshot,
  type ParsedTask,
} from './mcp-task.parser';
import { remoteIdProblem, strayRemoteId } from './snapshot-fields';
import { STATELESS_TASKS_VERSION, StatelessTasksDriver } from './stateless-tasks.driver';
import { classifyPollError, classifySubmitError } from './submit-safety';
import { taskSupportProblem } from './task-support';

/** JSON-RPC "Invalid params": what the SDK answers for an unknown (or already ended) task. */
const INVALID_PARAMS = -32602;

/**
 * Contract `mcp-tasks`: native MCP Tasks in both designs. Each server's design is pinned or
 * discovered (`UpstreamPort.taskProtocol`) at submit and stored with the task, so its polls,
 * cancel and answers stay on it. 2026-07-28 (SEP-2663) is {@link StatelessTasksDriver}; this
 * class speaks 2025-11-25 (SEP-1686), where a task is bound to the session that created it: over
 * Streamable HTTP every poll reattaches to the stored session; over stdio the task lives in this
 * worker's child process and the row is pinned to the worker.
 */
export class McpTasksDriver implements ContractDriver {
  private readonly stateless: StatelessTasksDriver;

  constructor(private readonly port: UpstreamPort) {
    this.stateless = new StatelessTasksDriver(port);
  }

  async submit(ctx: DriverContext): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.McpTasks);
    try {
      if ((await this.port.taskProtocol(ctx.server.name, ctx.signal)) === STATELESS_TASKS_VERSION) {
        return await this.stateless.submit(ctx);
      }
    } catch (error) {
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    return this.submitSessionTask(ctx);
  }

  /**
   * SEP-1686 shows a question but cannot take its answer through a poller (mcp-task.parser.ts),
   * so only 2026-07-28 tasks are answered.
   */
  async answer(ctx: DriverContext, answers: PendingAnswers): Promise<AnswerOutcome> {
    if (!isStateless(ctx)) return { sent: [] };
    return this.stateless.answer(ctx, answers);
  }

  private async submitSessionTask(ctx: DriverContext): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.McpTasks);
    const args = toolArguments(ctx);
    let session: UpstreamSession;
    let reply: unknown;
    try {
      session = await this.port.taskSession(ctx.server.name, ctx.signal);
      this.assertTaskSupport(ctx, toolset.tool, session);
      const task = toolset.ttlMs === undefined ? {} : { ttl: toolset.ttlMs };
      reply = await session.request(
        'tools/call',
        { name: toolset.tool, arguments: args, task },
        { idempotent: false, signal: ctx.signal },
      );
    } catch (error) {
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    let task: ParsedTask;
    try {
      task = parseCreateTaskReply(reply);
      const problem = remoteIdProblem(task.taskId);
      if (problem) throw protocolError(`tools/call: "task.taskId" ${problem}`);
    } catch (error) {
      // A task we cannot store must not be left running for nobody: cancel it, best effort.
      const nested = isRecord(reply) && isRecord(reply.task) ? reply.task.taskId : undefined;
      const stray = strayRemoteId(error, nested);
      if (stray) await this.request(session, 'tasks/cancel', stray, ctx).catch(() => undefined);
      throw error;
    }
    const pinned = ctx.server.transport !== 'http';
    const snapshot = taskSnapshot(task);
    // A task already ended at creation is reported by the first poll, which fetches its result.
    if (snapshot.status !== TaskStatus.InputRequired) snapshot.status = TaskStatus.Working;
    return {
      handle: {
        remoteTaskId: task.taskId,
        sessionId: session.sessionId ?? null,
        protocolVersion: session.protocolVersion ?? null,
        driverState: {
          ttl: task.ttl,
          pollInterval: task.pollInterval ?? null,
          pinnedWorkerId: pinned ? ctx.workerId : null,
        },
        pinnedWorkerId: pinned ? ctx.workerId : null,
      },
      snapshot,
    };
  }

  async poll(ctx: DriverContext): Promise<TaskSnapshot> {
    if (isStateless(ctx)) return this.stateless.poll(ctx);
    const taskId = requireRemoteId(ctx);
    try {
      const session = await this.sessionFor(ctx);
      const task = this.checked(
        await this.request(session, 'tasks/get', taskId, ctx),
        taskId,
        'tasks/get',
      );
      return await this.withResult(session, task, ctx);
    } catch (error) {
      throw classifyTaskError(error, 'tasks/get', ctx.signal);
    }
  }

  async cancel(ctx: DriverContext): Promise<TaskSnapshot> {
    if (isStateless(ctx)) return this.stateless.cancel(ctx);
    const taskId = requireRemoteId(ctx);
    try {
      const session = await this.sessionFor(ctx);
      let task: ParsedTask;
      try {
        task = this.checked(
          await this.request(session, 'tasks/cancel', taskId, ctx),
          taskId,
          'tasks/cancel',
        );
      } catch (error) {
        if (!(error instanceof UpstreamRpcError && error.code === INVALID_PARAMS)) throw error;
        // Already terminal (or unknown): read the real state; a second -32602 means lost.
        task = this.checked(
          await this.request(session, 'tasks/get', taskId, ctx),
          taskId,
          'tasks/get',
        );
      }
      if (task.status === TaskStatus.Working || task.status === TaskStatus.InputRequired) {
        throw new TransientTaskError(`tasks/cancel left task ${taskId} ${task.status}`);
      }
      return await this.withResult(session, task, ctx);
    } catch (error) {
      throw classifyTaskError(error, 'tasks/cancel', ctx.signal);
    }
  }

  /** Never send params.task to a server or tool that did not declare task support. */
  private assertTaskSupport(ctx: DriverContext, tool: string, session: UpstreamSession): void {
    const status = this.port.status(ctx.server.name);
    if (!status.tools) throw new TransientTaskError(`tools of "${ctx.server.name}" not listed yet`);
    const problem = taskSupportProblem(
      tool,
      status.tools,
      session.capabilities ?? status.capabilities,
    );
    if (problem) throw new PermanentTaskError(TaskErrorCode.SubmitRejected, problem);
  }

  /**
   * The session the task is bound to. HTTP: the stored session, reattached without initialize.
   * stdio (and legacy SSE, which cannot be reattached): the task lives in the process this worker
   * talks to; any other worker cannot reach it.
   */
  private async sessionFor(ctx: DriverContext): Promise<UpstreamSession> {
    const { remoteSessionId, remoteProtocolVersion, driverState } = ctx.task;
    if (ctx.server.transport === 'http' && remoteSessionId) {
      return this.port.resumeSession(
        ctx.server.name,
        remoteSessionId,
        remoteProtocolVersion ?? LATEST_PROTOCOL_VERSION,
        ctx.signal,
      );
    }
    const owner = driverState?.pinnedWorkerId;
    if (typeof owner === 'string' && owner !== ctx.workerId) {
      throw new PermanentTaskError(
        TaskErrorCode.UpstreamTaskLost,
        `the task lived in a ${ctx.server.transport} session of worker ${owner}, which is gone`,
      );
    }
    return this.port.taskSession(ctx.server.name, ctx.signal);
  }

  /** tasks/result blocks until the task ends, so it is fetched only for a terminal task. */
  private async withResult(
    session: UpstreamSession,
    task: ParsedTask,
    ctx: DriverContext,
  ): Promise<TaskSnapshot> {
    if (task.status !== TaskStatus.Completed && task.status !== TaskStatus.Failed) {
      return taskSnapshot(task);
    }
    const reply = await session.request(
      'tasks/result',
      { taskId: task.taskId },
      { idempotent: true, signal: ctx.signal, timeoutMs: ctx.server.callTimeoutMs },
    );
    return resultSnapshot(task, reply, ctx.limits);
  }

  private async request(
    session: UpstreamSession,
    method: string,
    taskId: string,
    ctx: DriverContext,
  ): Promise<unknown> {
    return session.request(method, { taskId }, { idempotent: true, signal: ctx.signal });
  }

  private checked(reply: unknown, taskId: string, method: string): ParsedTask {
    const task = parseTask(reply, method);
    if (task.taskId !== taskId) {
      throw protocolError(`${method}: "taskId" must equal the created task's ID`);
    }
    return task;
  }
}

function isStateless(ctx: DriverContext): boolean {
  return ctx.task.remoteProtocolVersion === STATELESS_TASKS_VERSION;
}

/** A forgotten session or "-32602 Task not found" means the upstream lost the task for good. */
function classifyTaskError(error: unknown, what: string, signal: AbortSignal): Error {
  if (error instanceof UpstreamSessionExpiredError) {
    return new PermanentTaskError(
      TaskErrorCode.UpstreamTaskLost,
      `${what}: the session the task was bound to is gone`,
      { cause: error },
    );
  }
  if (error instanceof UpstreamRpcError && error.code === INVALID_PARAMS) {
    return new PermanentTaskError(TaskErrorCode.UpstreamTaskLost, `${what}: ${error.message}`, {
      cause: error,
    });
  }
  return classifyPollError(error, what, signal);
}
