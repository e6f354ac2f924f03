import { ServerConfig, Settings, ToolsetConfig } from '@app/config';
import { DriverContext } from '@app/drivers';
import { ClaimedTask } from '@app/persistence';
import type { Logger } from 'pino';

/** What one attempt runs with, beside its claimed row. */
export interface ItemScope {
  toolset: ToolsetConfig;
  server: ServerConfig;
  controller: AbortController;
  /**
   * The attempt's signal: the poller's aborts and the attempt's deadline (leases.md, "Attempt
   * deadlines"). Every upstream step takes it; a held sync call takes the controller's alone.
   */
  signal: AbortSignal;
  log: Logger;
  /** Local epoch ms at which the claim's lease expires (from the claim's database times). */
  leaseExpiresAtMs: number;
}

/**
 * What a driver gets for one upstream step of an attempt: the row's upstream handle, the
 * toolset and server, the result limits and the scope's signal (the held call passes a scope
 * whose signal is the controller's alone).
 */
export function driverContext(
  item: ClaimedTask,
  scope: ItemScope,
  workerId: string,
  settings: Settings,
  onProgress?: DriverContext['onProgress'],
): DriverContext {
  return {
    task: {
      id: item.id,
      input: item.input,
      remoteTaskId: item.remoteTaskId,
      remoteSessionId: item.remoteSessionId,
      remoteProtocolVersion: item.remoteProtocolVersion,
      driverState: item.driverState,
    },
    toolset: scope.toolset,
    server: scope.server,
    workerId,
    limits: {
      maxResultBytes: settings.results.maxBytes,
      previewChars: settings.results.previewChars,
    },
    signal: scope.signal,
    onProgress,
  };
}
