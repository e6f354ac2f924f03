import { Inject, Injectable } from '@nestjs/common';
import { Contract, isRoundHandle, isTerminal, isRecord } from '@app/common';
import { Settings, SETTINGS } from '@app/config';
import { CatalogEntry, TaskRow } from '@app/persistence';
import { invalidParams } from '@app/wire';
import { McpCall } from '../mcp-call.context';
import { McpTaskAccess } from '../mcp-task-access.service';
import { inputRequests } from '../mcp-task.view';
import { McpToolCalls } from '../mcp-tool-calls.service';

/** What a task-creating `tools/call` answers: the task, or a round of questions before it. */
export type TaskOrRound = { task: TaskRow } | { round: Record<string, unknown> };

const STATE_PREFIX = 'gateway-round:';

/**
 * Multi-round-trip rounds before a task exists (SEP-2322 composed with SEP-2663), relayed. An
 * upstream on MCP 2026-07-28 may answer a `tools/call` with questions first and make its task
 * only once they are answered; the SEP asks a server to resolve those rounds synchronously, so
 * the front door does what it cannot skip: it stores the gateway task (durably, as always),
 * then waits up to MCP_ROUND_WAIT_MS for the poller to reach the upstream. Questions asked
 * before any upstream task go back as `resultType: "input_required"` with a `requestState`
 * naming the gateway task; the client's retry (same tool, `inputResponses`, that
 * `requestState`) stores the answers through the durable input path and waits again. Anything
 * else (an upstream task, an outcome, or no answer within the wait) is the task.
 */
@Injectable()
export class McpRounds {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly access: McpTaskAccess,
    private readonly calls: McpToolCalls,
  ) {}

  async taskOrRound(call: McpCall, entry: CatalogEntry): Promise<TaskOrRound> {
    const retry =
      call.params.requestState !== undefined || call.params.inputResponses !== undefined;
    const task = retry
      ? await this.continueRound(call, entry)
      : await this.calls.create(call, entry);
    const waitMs = this.settings.mcp.roundWaitMs;
    // Only the mcp-tasks contract's upstreams decide between questions and a task.
    if (entry.contract !== Contract.McpTasks || waitMs === 0) return { task };
    const decided = await this.access.waitFor(task, upstreamDecided, call.abort, waitMs);
    const open = inputRequests(decided);
    if (isTerminal(decided.status) || !isRoundHandle(decided.remoteTaskId))
      return { task: decided };
    if (Object.keys(open).length === 0) return { task: decided };
    return {
      round: {
        resultType: 'input_required',
        inputRequests: open,
        requestState: `${STATE_PREFIX}${Buffer.from(decided.id, 'utf8').toString('base64url')}`,
      },
    };
  }

  /**
   * A retry: the task its `requestState` names must be the caller's and this tool's; the answers
   * are stored like `tasks/update` (keys that are not open are ignored, so a repeated retry is
   * harmless). The arguments of the retry are not read: the task runs those of the first call.
   */
  private async continueRound(call: McpCall, entry: CatalogEntry): Promise<TaskRow> {
    const state = call.params.requestState;
    const taskId =
      typeof state === 'string' && state.startsWith(STATE_PREFIX) && state.length <= 200
        ? Buffer.from(state.slice(STATE_PREFIX.length), 'base64url').toString('utf8')
        : null;
    const row = taskId === null ? null : await this.access.find(call.principal.userId, taskId);
    if (!row || row.toolset !== entry.name) {
      throw invalidParams('requestState is not one this server issued for this tool');
    }
    const responses = call.params.inputResponses ?? {};
    if (!isRecord(responses)) throw invalidParams('params.inputResponses must be an object');
    await this.access.answer(row, responses);
    // Read again: the answered questions are no longer open, so the wait below looks past them.
    return (await this.access.find(call.principal.userId, row.id)) ?? row;
  }
}

/**
 * The upstream has said what the call is: a task (a remote ID that is not a round marker), or a
 * round whose questions are still open. A round whose answers are stored but not yet delivered
 * is not a decision: the poller's retry of the call will bring the next one.
 */
function upstreamDecided(row: TaskRow): boolean {
  if (!isRoundHandle(row.remoteTaskId)) return row.remoteTaskId !== null;
  return Object.keys(inputRequests(row)).length > 0;
}
