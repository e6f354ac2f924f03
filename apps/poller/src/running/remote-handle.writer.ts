import { LeaseLostError, RemoteHandle, TaskSnapshot } from '@app/common';
import { ClaimedTask, TaskLeaseRepository } from '@app/persistence';
import type { ItemScope } from './item-scope';
import { HANDLE_WRITE_MAX_PAUSE_MS, HANDLE_WRITE_MIN_PAUSE_MS, sleep } from './until-landed';

/**
 * Stores the handle an upstream returned (leases.md, "Remote handles"): the fenced write is
 * retried until the lease expires; once the lease is gone the write still lands if nobody
 * claimed the row since (our token is still on it); failing that, the upstream task is
 * cancelled best-effort and the handle logged at error level, so no handle vanishes silently.
 */
export class RemoteHandleWriter {
  /** @param cancel cancels the upstream task of `item` (whose handle is the orphaned one). */
  constructor(
    private readonly leases: TaskLeaseRepository,
    private readonly leaseMs: number,
    private readonly cancel: (item: ClaimedTask, scope: ItemScope) => Promise<unknown>,
  ) {}

  async store(
    item: ClaimedTask,
    handle: RemoteHandle,
    snapshot: TaskSnapshot | undefined,
    delay: number,
    scope: ItemScope,
  ): Promise<void> {
    const leases = this.leases;
    const log = scope.log;
    for (let attempt = 1, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; attempt++) {
      try {
        await leases.recordSubmitted(item.lease, handle, snapshot, delay);
        return;
      } catch (error) {
        if (error instanceof LeaseLostError || Date.now() >= scope.leaseExpiresAtMs) break;
        log.warn({ err: error, attempt }, 'storing the remote handle failed; retrying');
        await sleep(Math.min(pause, Math.max(0, scope.leaseExpiresAtMs - Date.now())));
        pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
      }
    }
    // Past the lease (or our token is gone): keep trying for one more lease's length while the
    // database comes back.
    const giveUpAt = Date.now() + this.leaseMs;
    for (
      let pause = HANDLE_WRITE_MIN_PAUSE_MS;
      ;
      pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS)
    ) {
      try {
        if (await leases.recordSubmittedIfStillOurs(item.lease, handle, snapshot, delay)) {
          log.warn('stored the remote handle after the lease expired (no other claim meanwhile)');
          return;
        }
        // Our token is gone: another claim took the row, or an earlier try whose reply was lost
        // landed and cleared it. Only the row can tell (docs/leases.md, "Ambiguous commits").
        if (await leases.handleStored(item.id, handle)) {
          log.warn('the remote handle had been stored by a write whose reply was lost');
          return;
        }
        break;
      } catch (error) {
        if (Date.now() >= giveUpAt) {
          // Neither stored nor proven unstored: cancelling could end a task the row tracks.
          scope.log.error(
            { remote_task_id: handle.remoteTaskId, server: scope.server.name, err: error },
            'could not tell whether the remote handle was stored; the upstream task is left running',
          );
          throw new LeaseLostError(item.id);
        }
        log.warn({ err: error }, 'storing the remote handle failed; retrying');
        await sleep(pause);
      }
    }
    await this.orphaned(item, handle, scope);
    throw new LeaseLostError(item.id);
  }

  /** A handle that could not be stored: cancel upstream best-effort, and leave it in the log. */
  private async orphaned(item: ClaimedTask, handle: RemoteHandle, scope: ItemScope): Promise<void> {
    const fields = {
      remote_task_id: handle.remoteTaskId,
      remote_session_id: handle.sessionId ?? null,
      server: scope.server.name,
    };
    scope.log.error(fields, 'remote handle could not be stored; cancelling the upstream task');
    const task = {
      ...item,
      remoteTaskId: handle.remoteTaskId,
      remoteSessionId: handle.sessionId ?? null,
      remoteProtocolVersion: handle.protocolVersion ?? null,
      driverState: handle.driverState ?? null,
    };
    const controller = new AbortController();
    const cancelScope = { ...scope, controller, signal: controller.signal };
    try {
      await this.cancel(task, cancelScope);
      scope.log.error(fields, 'cancelled the upstream task whose handle could not be stored');
    } catch (error) {
      scope.log.error({ ...fields, err: error }, 'could not cancel the orphaned upstream task');
    }
  }
}
