import { Contract, TaskStatus, type TaskSnapshot } from '@app/common';
import type { OrdinaryToolset } from '@app/config';
import type { UpstreamPort, UpstreamSession } from '@app/mcp';
import type { ContractDriver, DriverContext, SubmitOutcome } from './contract-driver';
import { protocolError } from './driver.errors';
import { parseStatusAnswer, parseSubmitAnswer } from './ordinary-answer.parser';
import { remoteIdProblem } from './snapshot-fields';
import { classifyPollError, classifySubmitError } from './submit-safety';
import { requireRemoteId, toolArguments, toolsetOf } from './driver-context';

/**
 * Contract `ordinary`: three plain tools on the server's pooled session. The parsing rules live
 * in ordinary-answer.parser.ts; this class adds the calls and the error classification.
 */
export class OrdinaryDriver implements ContractDriver {
  constructor(private readonly port: UpstreamPort) {}

  async submit(ctx: DriverContext): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.Ordinary);
    const args = toolArguments(ctx);
    let taskId: string;
    let session: UpstreamSession;
    try {
      session = await this.port.session(ctx.server.name);
      const result = await session.callTool(toolset.submitTool, args, {
        idempotent: false,
        signal: ctx.signal,
      });
      taskId = parseSubmitAnswer(result);
    } catch (error) {
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    const problem = remoteIdProblem(taskId);
    if (problem) {
      // We cannot store the handle, so we must not leave the upstream working for nobody.
      await this.cancelBestEffort(session, toolset, taskId, ctx.signal);
      throw protocolError(`submit: "task_id" ${problem}`);
    }
    return { handle: { remoteTaskId: taskId }, snapshot: { status: TaskStatus.Working } };
  }

  async poll(ctx: DriverContext): Promise<TaskSnapshot> {
    return this.ask(ctx, 'status');
  }

  async cancel(ctx: DriverContext): Promise<TaskSnapshot> {
    return this.ask(ctx, 'cancel');
  }

  /** status and cancel share one shape: `{task_id}` in, a status answer out; both idempotent. */
  private async ask(ctx: DriverContext, op: 'status' | 'cancel'): Promise<TaskSnapshot> {
    const toolset = toolsetOf(ctx, Contract.Ordinary);
    const remoteTaskId = requireRemoteId(ctx);
    try {
      const session = await this.port.session(ctx.server.name);
      const tool = op === 'status' ? toolset.statusTool : toolset.cancelTool;
      const result = await session.callTool(
        tool,
        { task_id: remoteTaskId },
        { idempotent: true, signal: ctx.signal },
      );
      return parseStatusAnswer(result, remoteTaskId, ctx.limits, op);
    } catch (error) {
      throw classifyPollError(error, op, ctx.signal);
    }
  }

  private async cancelBestEffort(
    session: UpstreamSession,
    toolset: OrdinaryToolset,
    taskId: string,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      await session.callTool(toolset.cancelTool, { task_id: taskId }, { idempotent: true, signal });
    } catch {
      // Best effort by design: the task fails with protocol_error either way.
    }
  }
}
