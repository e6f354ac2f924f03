import { Contract, PermanentTaskError, TaskErrorCode, isRecord } from '@app/common';
import type { McpTasksToolset, OrdinaryToolset, SyncCallToolset, ToolsetConfig } from '@app/config';
import type { DriverContext } from './contract-driver';

interface ToolsetByContract {
  [Contract.Ordinary]: OrdinaryToolset;
  [Contract.McpTasks]: McpTasksToolset;
  [Contract.SyncCall]: SyncCallToolset;
}

/** The context's toolset, narrowed; a mismatch means the registry routed the task wrongly. */
export function toolsetOf<C extends Contract>(
  ctx: DriverContext,
  contract: C,
): ToolsetByContract[C] {
  const toolset: ToolsetConfig = ctx.toolset;
  if (toolset.contract !== contract) {
    throw new Error(`toolset "${toolset.name}" is ${toolset.contract}, not ${contract}`);
  }
  return toolset as ToolsetByContract[C];
}

/**
 * The consumer's arguments, passed unchanged. The API validated them against the tool's input
 * schema, so anything but an object here is a bug upstream of the driver; an absent input is `{}`.
 */
export function toolArguments(ctx: DriverContext): Record<string, unknown> {
  const input = ctx.task.input ?? {};
  if (!isRecord(input)) throw new TypeError(`task ${ctx.task.id}: input must be a JSON object`);
  return input;
}

/** The stored remote ID; without one nothing upstream can be asked about the task. */
export function requireRemoteId(ctx: DriverContext): string {
  if (!ctx.task.remoteTaskId) {
    throw new PermanentTaskError(
      TaskErrorCode.UpstreamTaskLost,
      `task ${ctx.task.id} has no remote task ID to poll or cancel`,
    );
  }
  return ctx.task.remoteTaskId;
}

/**
 * A stdio server is one child process per poller, each with its own jobs and tasks: an ID from
 * this worker's child means nothing to another worker's child, so the row stays with this worker
 * (the claim's pinning), unless the operator declares the server's state shared (`sharedState`).
 * Over a url every poller reaches the same server.
 */
export function pinnedOwner(ctx: DriverContext): string | null {
  return ctx.server.transport === 'stdio' && !ctx.server.sharedState ? ctx.workerId : null;
}
