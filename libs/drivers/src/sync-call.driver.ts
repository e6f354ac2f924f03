import {
  Contract,
  PROGRESS_MESSAGE_CHARS,
  PermanentTaskError,
  TaskErrorCode,
  TaskStatus,
  cutText,
  type TaskProgress,
  type TaskSnapshot,
} from '@app/common';
import type { UpstreamPort } from '@app/upstream';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ContractDriver, DriverContext, SubmitOutcome } from './contract-driver';
import { toolArguments, toolsetOf } from './driver-context';
import { CallAbortedError } from './driver.errors';
import { classifySubmitError } from './submit-safety';
import { toolResultSnapshot } from './tool-result';

/** The local marker stored as the remote ID: the held call itself is the task. */
export const SYNC_HANDLE_PREFIX = 'sync:';

/**
 * Contract `sync-call`: the submit *is* the call, held open (for hours if configured) while the
 * poller renews its lease. There is nothing upstream to poll or cancel afterwards: the call ends
 * the task, and a cancel aborts the call through `ctx.signal` (the SDK then sends
 * `notifications/cancelled`).
 */
export class SyncCallDriver implements ContractDriver {
  constructor(private readonly port: UpstreamPort) {}

  /**
   * Holds the call and resolves with a terminal snapshot: `completed` with the bounded
   * CallToolResult (without `_meta`), or `failed`/`upstream_failed` when it is `isError`.
   * Throws {@link CallAbortedError} when `ctx.signal` aborts the call.
   */
  async submit(ctx: DriverContext): Promise<SubmitOutcome> {
    const toolset = toolsetOf(ctx, Contract.SyncCall);
    const args = toolArguments(ctx);
    let result: CallToolResult;
    try {
      const session = await this.port.session(ctx.server.name, ctx.signal);
      result = await session.callTool(toolset.tool, args, {
        idempotent: false,
        timeoutMs: toolset.callTimeoutMs,
        signal: ctx.signal,
        onProgress: (update) => ctx.onProgress?.(toTaskProgress(update)),
      });
    } catch (error) {
      if (ctx.signal.aborted) {
        throw new CallAbortedError(`call to "${toolset.tool}" aborted`, { cause: error });
      }
      throw classifySubmitError(error, toolset, ctx.signal);
    }
    return {
      handle: { remoteTaskId: `${SYNC_HANDLE_PREFIX}${ctx.task.id}` },
      snapshot: callSnapshot(result, ctx),
    };
  }

  /**
   * A sync-call task is polled only when its held call is no longer held: the worker that held it
   * died with the call recorded as started. The poller applies the crash rule before this
   * (`retryOnCrash` → run again); reaching here means the outcome cannot be known.
   */
  async poll(ctx: DriverContext): Promise<TaskSnapshot> {
    throw new PermanentTaskError(
      TaskErrorCode.OutcomeUncertain,
      `the call to "${toolsetOf(ctx, Contract.SyncCall).tool}" was held by a worker that stopped; ` +
        'its outcome is unknown and the tool is not declared safe to repeat (retryOnCrash)',
    );
  }

  /** The held call is aborted by the poller through `ctx.signal`; nothing is left upstream. */
  async cancel(_ctx: DriverContext): Promise<TaskSnapshot> {
    return { status: TaskStatus.Cancelled };
  }
}

function toTaskProgress(update: {
  progress: number;
  total?: number;
  message?: string;
}): TaskProgress {
  const progress: TaskProgress = { current: update.progress };
  if (update.total !== undefined) progress.total = update.total;
  if (update.message !== undefined)
    progress.message = cutText(update.message, PROGRESS_MESSAGE_CHARS);
  return progress;
}

function callSnapshot(result: CallToolResult, ctx: DriverContext): TaskSnapshot {
  return toolResultSnapshot(result, ctx.limits, 'tools/call result');
}
