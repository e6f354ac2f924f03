import { Contract, TaskStatus, TransientTaskError, type TaskSnapshot } from '@app/common';
import type { OrdinaryToolset } from '@app/config';
import type { UpstreamPort, UpstreamSession } from '@app/upstream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type {
  AnswerOutcome,
  ContractDriver,
  DriverContext,
  PendingAnswers,
  SubmitOutcome,
} from './contract-driver';
import { protocolError } from './driver.errors';
import { parseStatusAnswer, parseSubmitAnswer } from './ordinary-answer.parser';
import { lastErrorText, remoteIdProblem, strayRemoteId } from './snapshot-fields';
import { classifyPollError, classifySubmitError } from './submit-safety';
import { pinnedOwner, requireRemoteId, toolArguments, toolsetOf } from './driver-context';

/**
 * Contract `ordinary`: three plain tools on the server's pooled session. The parsing rules live
 * in ordinary-answer.parser.ts; this class adds the calls and the error classification.
 */
export class OrdinaryDriver implements ContractDriver {
  constructor(private readonly port: UpstreamPort) {}

  async submit(ctx: DriverContext): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.Ordinary);
    const args = toolArguments(ctx);
    let session: UpstreamSession;
    let result: CallToolResult;
    try {
      session = await this.port.session(ctx.server.name, ctx.signal);
      result = await session.callTool(toolset.submitTool, args, {
        idempotent: false,
        signal: ctx.signal,
      });
    } catch (error) {
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    let taskId: string;
    try {
      taskId = parseSubmitAnswer(result);
      const problem = remoteIdProblem(taskId);
      if (problem) throw protocolError(`submit: "task_id" ${problem}`);
    } catch (error) {
      // A handle we cannot store must not leave the upstream working for nobody.
      const stray = strayRemoteId(error, result.structuredContent?.task_id);
      if (stray) await this.cancelBestEffort(session, toolset, stray, ctx.signal);
      throw error;
    }
    return {
      handle: { remoteTaskId: taskId, pinnedWorkerId: pinnedOwner(ctx) },
      snapshot: { status: TaskStatus.Working },
    };
  }

  async poll(ctx: DriverContext): Promise<TaskSnapshot> {
    const snapshot = await this.ask(ctx, 'status');
    // Without an inputTool the question is shown, but nothing can carry an answer upstream.
    if (snapshot.inputRequired && !toolsetOf(ctx, Contract.Ordinary).inputTool) {
      snapshot.inputRequired = { ...snapshot.inputRequired, answerable: false };
    }
    return snapshot;
  }

  /**
   * The toolset's `inputTool`, called with `{task_id, responses}`. An uncertain earlier attempt
   * is repeated: the tool must ignore keys it already has (contracts.md, "Answering questions").
   */
  async answer(ctx: DriverContext, answers: PendingAnswers): Promise<AnswerOutcome> {
    const toolset = toolsetOf(ctx, Contract.Ordinary);
    if (!toolset.inputTool) return { sent: [] };
    const remoteTaskId = requireRemoteId(ctx);
    let result: CallToolResult;
    try {
      const session = await this.port.session(ctx.server.name, ctx.signal);
      await answers.beforeSend(Object.keys(answers.responses));
      result = await session.callTool(
        toolset.inputTool,
        { task_id: remoteTaskId, responses: answers.responses },
        { idempotent: false, signal: ctx.signal },
      );
    } catch (error) {
      throw classifyPollError(error, 'input', ctx.signal);
    }
    if (result.isError === true) {
      throw new TransientTaskError(lastErrorText(result, 'input: the tool answered isError'));
    }
    return { sent: Object.keys(answers.responses) };
  }

  async cancel(ctx: DriverContext): Promise<TaskSnapshot> {
    return this.ask(ctx, 'cancel');
  }

  /** status and cancel share one shape: `{task_id}` in, a status answer out; both idempotent. */
  private async ask(ctx: DriverContext, op: 'status' | 'cancel'): Promise<TaskSnapshot> {
    const toolset = toolsetOf(ctx, Contract.Ordinary);
    const remoteTaskId = requireRemoteId(ctx);
    try {
      const session = await this.port.session(ctx.server.name, ctx.signal);
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
