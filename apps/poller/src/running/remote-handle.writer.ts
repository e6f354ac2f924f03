import { LeaseLostError, RemoteHandle, TaskSnapshot } from '@app/common';
import { ClaimedTask, TaskLeaseRepository, isDatabaseUnavailable } from '@app/persistence';
import type { ItemScope } from './item-scope';
import {
  HANDLE_WRITE_MAX_PAUSE_MS,
  HANDLE_WRITE_MIN_PAUSE_MS,
  isRetryLogged,
  sleep,
} from './until-landed';

/**
 * Stores the handle an upstream returned (leases.md, "Remote handles"). The fenced write is
 * retried; while it fails because the database is unavailable (isDatabaseUnavailable: down, out
 * of disk) the claim is kept by renewing the lease every lease/3, a narrow write of the lease row
 * that such a database may still take, and the writer keeps trying however long that lasts. Once
 * the lease is gone the write still lands if nobody claimed the row since (our token is still on
 * it). Any other refusal is tried for one more lease's length. A row proven not to hold the handle
 * gets the upstream task cancelled best-effort and the handle logged at error level, so no handle
 * vanishes silently.
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
    const lease = new KeptLease(leases, item, this.leaseMs, scope);
    // Named in the retries' lines: a process killed while it waits (a pod past its grace period)
    // leaves the handle in its log, where an operator can find it.
    const held = { remote_task_id: handle.remoteTaskId, server: scope.server.name };
    for (let attempt = 1, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; attempt++) {
      try {
        await leases.recordSubmitted(item.lease, handle, snapshot, delay);
        return;
      } catch (error) {
        // Only a database that cannot serve the write now is waited out with the claim kept: a
        // write refused for another reason may be refused for good, and its lease runs out.
        if (error instanceof LeaseLostError) break;
        if (!(await lease.keep(isDatabaseUnavailable(error)))) break;
        if (isRetryLogged(attempt)) {
          log.warn({ err: error, attempt, ...held }, 'storing the remote handle failed; retrying');
        }
        await sleep(Math.min(pause, lease.leftMs()));
        pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
      }
    }
    // Past the lease (or our token is gone): keep trying while the database comes back.
    const giveUpAt = Date.now() + this.leaseMs;
    for (
      let attempt = 1, pause = HANDLE_WRITE_MIN_PAUSE_MS;
      ;
      attempt++, pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS)
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
        if (!isDatabaseUnavailable(error) && Date.now() >= giveUpAt) {
          // Neither stored nor proven unstored: cancelling could end a task the row tracks.
          scope.log.error(
            { ...held, err: error },
            'could not tell whether the remote handle was stored; the upstream task is left running',
          );
          throw new LeaseLostError(item.id);
        }
        if (isRetryLogged(attempt)) {
          log.warn({ err: error, attempt, ...held }, 'storing the remote handle failed; retrying');
        }
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

/**
 * The claim of an item whose handle write keeps failing (or the end of a call answered at once:
 * call-end.ts), renewed every lease/3 as a held call's is (held-call.guard.ts), so another worker
 * does not take the row over while the handle waits in memory. Its end is counted from when each
 * renewal was sent, so it is never later than the database's.
 */
export class KeptLease {
  private endsAtMs: number;
  private renewedAtMs: number;

  constructor(
    private readonly leases: Pick<TaskLeaseRepository, 'renewWatchingCancel'>,
    private readonly item: ClaimedTask,
    private readonly leaseMs: number,
    scope: ItemScope,
  ) {
    this.endsAtMs = scope.leaseExpiresAtMs;
    this.renewedAtMs = scope.leaseExpiresAtMs - leaseMs;
  }

  /** Time left on the lease (ms, never negative). */
  leftMs(): number {
    return Math.max(0, this.endsAtMs - Date.now());
  }

  /**
   * With `renew`, renews the lease when a third of it has passed since the claim or the last
   * renewal. False when the lease is gone: expired with no renewal landing (the renewal, fenced by
   * the token alone, lands past the expiry while nobody claimed the row), or the renewal found
   * another claim's token.
   * A cancel the renewal reports is left to the handle write, which stores the handle and makes
   * the row due for the cancel (leases.md, "Cancellation").
   */
  async keep(renew: boolean): Promise<boolean> {
    if (renew && Date.now() - this.renewedAtMs >= this.leaseMs / 3) {
      const sentAtMs = Date.now();
      try {
        await this.leases.renewWatchingCancel(this.item.lease, this.leaseMs);
        this.renewedAtMs = sentAtMs;
        this.endsAtMs = sentAtMs + this.leaseMs;
      } catch (error) {
        if (error instanceof LeaseLostError) return false;
        // The database refused this too: the lease runs on as it was, and the next try renews.
      }
    }
    return Date.now() < this.endsAtMs;
  }
}
