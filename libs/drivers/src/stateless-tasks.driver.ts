import {
  Contract,
  JSON_FIELD_MAX_BYTES,
  PermanentTaskError,
  ROUND_HANDLE_PREFIX,
  TaskErrorCode,
  TaskStatus,
  TransientTaskError,
  isTerminal,
  unstorableTextProblem,
  type TaskSnapshot,
  isRecord,
} from '@app/common';
import { UpstreamRpcError, type StatelessSession, type UpstreamPort } from '@app/upstream';
import type {
  AnswerOutcome,
  ContractDriver,
  DriverContext,
  PendingAnswers,
  SubmitOutcome,
} from './contract-driver';
import { pinnedOwner, requireRemoteId, toolArguments, toolsetOf } from './driver-context';
import { protocolError } from './driver.errors';
import type { InputRequest } from './input-requests';
import { remoteIdProblem } from './snapshot-fields';
import {
  parseStatelessTask,
  parseToolCallReply,
  statelessSnapshot,
  withSchedule,
  type StatelessTask,
} from './stateless-task.parser';
import { classifyPollError, classifySubmitError } from './submit-safety';

/** The revision this driver speaks; stored as the task's protocol version. */
export const STATELESS_TASKS_VERSION = '2026-07-28';

/** JSON-RPC "Invalid params": unknown or expired task (SEP-2663: MUST on tasks/get). */
const INVALID_PARAMS = -32602;

/** A round of questions the server asked before making a task (stored in driver_state). */
interface Round {
  requests: Record<string, InputRequest>;
  requestState?: string;
}

/**
 * Contract `mcp-tasks` on a server speaking MCP 2026-07-28 with the tasks extension (SEP-2663):
 * stateless requests, so any worker can poll any task. The server decides what a `tools/call`
 * becomes (a result at once, a task, or questions first); the task's outcome is inlined in
 * `tasks/get`; questions are answered with `tasks/update`, a round's with the call retried.
 */
export class StatelessTasksDriver implements ContractDriver {
  constructor(private readonly port: UpstreamPort) {}

  async submit(ctx: DriverContext): Promise<SubmitOutcome> {
    return this.call(ctx, {});
  }

  async poll(ctx: DriverContext): Promise<TaskSnapshot> {
    const round = roundOf(ctx);
    if (round) return roundSnapshot(round);
    const taskId = requireRemoteId(ctx);
    try {
      const task = await this.get(ctx, taskId);
      this.backstop(ctx, task);
      return statelessSnapshot(task, ctx.limits);
    } catch (error) {
      throw this.classify(ctx, error, 'tasks/get');
    }
  }

  /** `tasks/cancel` is only an ack: the status read after it decides. */
  async cancel(ctx: DriverContext): Promise<TaskSnapshot> {
    // A round has no upstream task: the server keeps nothing for an unanswered call.
    if (roundOf(ctx)) return { status: TaskStatus.Cancelled, inputRequired: null };
    const taskId = requireRemoteId(ctx);
    try {
      try {
        await this.client(ctx).request(
          'tasks/cancel',
          { taskId },
          { idempotent: true, signal: ctx.signal, name: taskId },
        );
      } catch (error) {
        // Unknown or already ended: the tasks/get below tells which (a second -32602 = lost).
        if (!(error instanceof UpstreamRpcError && error.code === INVALID_PARAMS)) throw error;
      }
      const task = await this.get(ctx, taskId);
      if (!isTerminal(task.status)) {
        throw new TransientTaskError(`tasks/cancel acknowledged; the task is still ${task.status}`);
      }
      return statelessSnapshot(task, ctx.limits);
    } catch (error) {
      throw this.classify(ctx, error, 'tasks/cancel');
    }
  }

  /**
   * A round's answers go back in the retried `tools/call`, all at once (the server asked them
   * together); a task's go in `tasks/update`, as many as there are. The server ignores keys it
   * already has (SEP-2663), so re-sending a task's uncertain answers is harmless; a retried call
   * is a new submit, so an uncertain one follows the submit-safety rule.
   */
  async answer(ctx: DriverContext, answers: PendingAnswers): Promise<AnswerOutcome> {
    const round = roundOf(ctx);
    if (round) {
      const keys = Object.keys(round.requests);
      if (!keys.every((key) => key in answers.responses)) return { sent: [] };
      const toolset = toolsetOf(ctx, Contract.McpTasks);
      if (answers.uncertain.some((key) => keys.includes(key)) && !toolset.retryOnCrash) {
        throw new PermanentTaskError(
          TaskErrorCode.OutcomeUncertain,
          'a worker stopped while retrying the call with the answers; the upstream may have ' +
            'started the work, and the toolset is not declared safe to repeat (retryOnCrash)',
        );
      }
      const inputResponses = Object.fromEntries(keys.map((k) => [k, answers.responses[k]]));
      const retry: Record<string, unknown> = { inputResponses };
      if (round.requestState !== undefined) retry.requestState = round.requestState;
      await answers.beforeSend(keys);
      return { sent: keys, next: await this.call(ctx, retry) };
    }
    const taskId = requireRemoteId(ctx);
    const keys = Object.keys(answers.responses);
    await answers.beforeSend(keys);
    try {
      await this.client(ctx).request(
        'tasks/update',
        { taskId, inputResponses: answers.responses },
        { idempotent: true, signal: ctx.signal, name: taskId },
      );
    } catch (error) {
      throw this.classify(ctx, error, 'tasks/update');
    }
    return { sent: keys };
  }

  /** One `tools/call`, first or retried with a round's answers; the server decides the rest. */
  private async call(ctx: DriverContext, extra: Record<string, unknown>): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.McpTasks);
    const params = { name: toolset.tool, arguments: toolArguments(ctx), ...extra };
    let reply: Record<string, unknown>;
    try {
      reply = await this.client(ctx).request('tools/call', params, {
        idempotent: false,
        signal: ctx.signal,
        name: toolset.tool,
      });
    } catch (error) {
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    let parsed: ReturnType<typeof parseToolCallReply>;
    try {
      parsed = parseToolCallReply(reply);
      if (parsed.kind === 'task') {
        const problem = remoteIdProblem(parsed.task.taskId);
        if (problem) throw protocolError(`tools/call: "taskId" ${problem}`);
      }
    } catch (error) {
      // A task we cannot store must not run for nobody: cancel it, best effort.
      const stray = typeof reply.taskId === 'string' && reply.taskId !== '' ? reply.taskId : null;
      if (stray) await this.cancelStray(ctx, stray);
      throw error;
    }
    switch (parsed.kind) {
      case 'complete':
        return { snapshot: statelessSnapshot(completedWith(parsed.result), ctx.limits) };
      case 'input': {
        const round: Round = { requests: parsed.requests };
        if (parsed.requestState !== undefined) {
          if (Buffer.byteLength(parsed.requestState) > JSON_FIELD_MAX_BYTES) {
            throw protocolError(
              `tools/call: "requestState" is over the ${JSON_FIELD_MAX_BYTES}-byte bound`,
            );
          }
          // Sent back verbatim like a task ID: a replaced character would change it.
          const unstorable = unstorableTextProblem(parsed.requestState);
          if (unstorable) throw protocolError(`tools/call: "requestState" ${unstorable}`);
          round.requestState = parsed.requestState;
        }
        return {
          handle: {
            remoteTaskId: `${ROUND_HANDLE_PREFIX}${ctx.task.id}`,
            protocolVersion: STATELESS_TASKS_VERSION,
            driverState: { round },
          },
          snapshot: roundSnapshot(round),
        };
      }
      case 'task': {
        const { task } = parsed;
        // The create result never inlines an outcome: a task already ended is polled at once.
        const snapshot = withSchedule(
          { status: isTerminal(task.status) ? task.status : TaskStatus.Working },
          task,
        );
        return {
          handle: {
            remoteTaskId: task.taskId,
            protocolVersion: STATELESS_TASKS_VERSION,
            driverState: { createdAt: task.createdAt, ttlMs: task.ttlMs },
            pinnedWorkerId: pinnedOwner(ctx),
          },
          snapshot,
        };
      }
    }
  }

  private async get(ctx: DriverContext, taskId: string): Promise<StatelessTask> {
    const reply = await this.client(ctx).request(
      'tasks/get',
      { taskId },
      { idempotent: true, signal: ctx.signal, name: taskId },
    );
    const task = parseStatelessTask(reply, 'tasks/get');
    if (task.taskId !== taskId) {
      throw protocolError('tasks/get: "taskId" must equal the created task\'s ID');
    }
    return task;
  }

  /**
   * `createdAt + ttlMs` is a backstop (SEP-2663 §TTL): a task still not ended after it is past
   * the server's promise to keep it, so it is treated as lost instead of polled forever.
   */
  private backstop(ctx: DriverContext, task: StatelessTask): void {
    if (isTerminal(task.status) || task.ttlMs === null) return;
    if (Date.now() > task.createdAt + task.ttlMs) throw expired(ctx.task.id);
  }

  /** -32602 = the server lost the task; a transient failure after the TTL = lost too. */
  private classify(ctx: DriverContext, error: unknown, what: string): Error {
    if (error instanceof UpstreamRpcError && error.code === INVALID_PARAMS) {
      return new PermanentTaskError(TaskErrorCode.UpstreamTaskLost, `${what}: ${error.message}`, {
        cause: error,
      });
    }
    const classified = classifyPollError(error, what, ctx.signal);
    const state = ctx.task.driverState;
    if (
      classified instanceof TransientTaskError &&
      typeof state?.createdAt === 'number' &&
      typeof state.ttlMs === 'number' &&
      Date.now() > state.createdAt + state.ttlMs
    ) {
      return expired(ctx.task.id);
    }
    return classified;
  }

  private async cancelStray(ctx: DriverContext, taskId: string): Promise<void> {
    try {
      await this.client(ctx).request(
        'tasks/cancel',
        { taskId },
        { idempotent: true, signal: ctx.signal, name: taskId },
      );
    } catch {
      // Best effort by design: the task fails with protocol_error either way.
    }
  }

  private client(ctx: DriverContext): StatelessSession {
    return this.port.statelessSession(ctx.server.name);
  }
}

function roundOf(ctx: DriverContext): Round | null {
  const round = ctx.task.driverState?.round;
  return isRecord(round) && isRecord(round.requests) ? (round as unknown as Round) : null;
}

function roundSnapshot(round: Round): TaskSnapshot {
  return { status: TaskStatus.InputRequired, inputRequired: { requests: round.requests } };
}

function completedWith(result: Record<string, unknown>): StatelessTask {
  const { resultType: _type, ...callResult } = result;
  return {
    taskId: '',
    status: TaskStatus.Completed,
    createdAt: 0,
    ttlMs: null,
    result: callResult,
  };
}

function expired(taskId: string): PermanentTaskError {
  return new PermanentTaskError(
    TaskErrorCode.UpstreamTaskLost,
    `task ${taskId}: the upstream task outlived its ttlMs (createdAt + ttlMs passed) without ending`,
  );
}
