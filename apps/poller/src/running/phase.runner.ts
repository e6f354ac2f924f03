import {
  Contract,
  DATABASE_ERROR_PREFIX,
  LeaseLostError,
  RemoteHandle,
  TaskSnapshot,
  TaskStatus,
  TransientTaskError,
  isTerminal,
} from '@app/common';
import { ServerConfig, Settings, ToolsetConfig } from '@app/config';
import { DriverContext, DriverRegistry, SubmitOutcome } from '@app/drivers';
import { GatewayMetrics } from '@app/metrics';
import { ClaimedTask, TaskLeaseRepository, WriteOutcome } from '@app/persistence';
import type { Logger } from 'pino';
import type { Preflight } from './crash-rules';
import { HeldCallGuard } from './held-call.guard';
import { abortedForDeadline } from './item-abort';
import { InputDelivery } from './input-delivery';
import { PollScheduler } from './poll-scheduler';
import { ProgressWriter } from './progress.writer';
import { UnrepeatableCalls } from './unrepeatable-calls';

/**
 * The driver's submit failed in a way that proves nothing landed upstream (or the toolset allows
 * repeating it): the retry must not be mistaken for a crash mid-submit.
 */
export class SubmitNotLandedError extends TransientTaskError {}

export interface PhaseRunnerDeps {
  settings: Settings;
  workerId: string;
  leases: TaskLeaseRepository;
  drivers: DriverRegistry;
  metrics: GatewayMetrics;
  scheduler: PollScheduler;
  heldCalls: Set<HeldCallGuard>;
  /** Attempts holding a call a repeat could duplicate: kept by a draining poller. */
  calls: UnrepeatableCalls;
}

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

// A handle the upstream returned must be stored (invariant 6): a write that fails for a reason
// other than a lost lease is retried until the lease's expiry, backing off from 250 ms to 2 s
// (a Postgres restart or failover takes seconds).
const HANDLE_WRITE_MIN_PAUSE_MS = 250;
const HANDLE_WRITE_MAX_PAUSE_MS = 2000;

/**
 * The three phases of leases.md on one claimed row. Throws typed errors; the caller turns them
 * into the row's next state and the attempt's outcome.
 */
export class PhaseRunner {
  private readonly answers: InputDelivery;

  constructor(private readonly deps: PhaseRunnerDeps) {
    this.answers = new InputDelivery(deps.leases, deps.calls);
  }

  async run(
    item: ClaimedTask,
    decision: Preflight,
    scope: ItemScope,
  ): Promise<{ nextDueInMs?: number }> {
    switch (decision.kind) {
      case 'finish':
        await this.finish(item, decision.snapshot);
        return {};
      case 'submit':
        return scope.toolset.contract === Contract.SyncCall
          ? this.holdCall(item, scope)
          : this.submit(item, scope);
      case 'poll':
        return this.poll(item, scope);
      case 'cancel':
        return this.cancel(item, scope);
    }
  }

  /**
   * A terminal write, counted as a transition; a pending cancel never blocks it here. A task
   * cancelled for its deadline is stored `failed` (the `tasks_deadline_end` trigger), and
   * counted so. Whether the cancel was the deadline's comes from the row (its `cancel_reason`,
   * at the claim or, for a held call, at a renewal), never from this process' clock.
   */
  async finish(
    item: ClaimedTask,
    snapshot: TaskSnapshot,
    forDeadline = item.cancelReason === 'deadline',
  ): Promise<void> {
    await this.deps.leases.finish(item.lease, snapshot);
    const deadline = snapshot.status === TaskStatus.Cancelled && forDeadline;
    this.transition(item, deadline ? TaskStatus.Failed : snapshot.status);
  }

  private async submit(item: ClaimedTask, scope: ItemScope): Promise<{ nextDueInMs?: number }> {
    await this.markSubmitStarted(item, scope);
    return this.record(item, await this.driverSubmit(item, scope), scope);
  }

  /**
   * The durable mark that a submit is about to go out, written before anything is sent. A write
   * whose outcome is unknown (the connection broke after sending it) is re-read under the fence:
   * this attempt's mark landed → send; it did not → write it again; until the attempt's
   * deadline. Failing that, nothing was sent: the runner releases the row as an unsent submit,
   * which clears a mark that did land (docs/leases.md, "Ambiguous commits").
   */
  private async markSubmitStarted(item: ClaimedTask, scope: ItemScope): Promise<void> {
    const { leases, calls } = this.deps;
    // From here on the attempt holds a submit: a draining poller keeps it, whatever the phase.
    calls.begin(
      item,
      scope.controller.signal,
      () => new SubmitNotLandedError('submit not sent: the attempt was aborted before it began'),
    );
    await this.untilLanded(scope, 'the submit-started mark', async (retry) => {
      if (retry && (await leases.submitMarkLanded(item.lease, item.submitAttempts))) return;
      await leases.markSubmitStarted(item.lease);
    });
  }

  /**
   * Runs `write` until it lands: a lost lease ends it at once; any other failure leaves the
   * outcome unknown, and `write` runs again (told it is a retry, so it can re-read first) after a
   * pause, until the attempt's deadline; then it fails as not sent ({@link SubmitNotLandedError}):
   * these writes come before anything is sent upstream.
   */
  private async untilLanded(
    scope: ItemScope,
    what: string,
    write: (retry: boolean) => Promise<void>,
  ): Promise<void> {
    for (let retry = false, pause = HANDLE_WRITE_MIN_PAUSE_MS; ; retry = true) {
      try {
        await write(retry);
        return;
      } catch (error) {
        if (error instanceof LeaseLostError) throw error;
        const left = scope.leaseExpiresAtMs - Date.now();
        if (scope.signal.aborted || left <= pause) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new SubmitNotLandedError(
            `${DATABASE_ERROR_PREFIX}${what} could not be written, so nothing was sent: ${reason}`,
            { cause: error },
          );
        }
        scope.log.warn({ err: error }, `writing ${what} failed; re-reading and retrying`);
        await sleep(pause);
        pause = Math.min(pause * 2, HANDLE_WRITE_MAX_PAUSE_MS);
      }
    }
  }

  /**
   * Stores what a call to the upstream produced: its handle before anything else, or, when the
   * upstream answered at once without making a task, the final state.
   */
  async record(
    item: ClaimedTask,
    outcome: SubmitOutcome,
    scope: ItemScope,
  ): Promise<{ nextDueInMs?: number }> {
    if (!outcome.handle) {
      await this.finish(item, outcome.snapshot ?? { status: TaskStatus.Completed });
      return {};
    }
    const snapshot = outcome.snapshot;
    // A first snapshot that is already terminal is polled at once, so the result is fetched and
    // stored by the one code path that stores results.
    const delay =
      snapshot && isTerminal(snapshot.status)
        ? 0
        : this.deps.scheduler.afterSuccess(snapshot ?? { status: TaskStatus.Working });
    await this.storeHandle(item, outcome.handle, snapshot, delay, scope);
    this.transition(
      item,
      snapshot?.status === TaskStatus.InputRequired ? TaskStatus.InputRequired : TaskStatus.Working,
    );
    return { nextDueInMs: item.cancelRequestedAt ? 0 : delay };
  }

  /** sync-call: the submit is the call, held under a renewed lease until it ends the task. */
  private async holdCall(item: ClaimedTask, scope: ItemScope): Promise<{ nextDueInMs?: number }> {
    const { leases, settings, heldCalls } = this.deps;
    await this.markSubmitStarted(item, scope);
    // Idempotent and fenced by a token it keeps: after an unknown outcome, simply written again.
    await this.untilLanded(scope, "the held call's working mark", () =>
      leases.markWorking(item.lease),
    );
    this.transition(item, TaskStatus.Working);
    const guard = new HeldCallGuard(
      leases,
      item.lease,
      settings.lease.ms,
      scope.controller,
      scope.log,
    );
    const progress = new ProgressWriter(leases, item.lease, scope.log);
    heldCalls.add(guard);
    guard.start();
    let outcome: SubmitOutcome;
    // The exception to the attempt deadline: the lease is renewed while the call is held.
    const held = { ...scope, signal: scope.controller.signal };
    try {
      outcome = await this.driverSubmit(item, held, (p) => progress.push(p));
    } finally {
      heldCalls.delete(guard);
      await guard.stop();
      await progress.flush();
    }
    await this.finish(
      item,
      outcome.snapshot ?? { status: TaskStatus.Completed },
      item.cancelReason === 'deadline' || abortedForDeadline(scope.controller.signal),
    );
    return {};
  }

  private async poll(item: ClaimedTask, scope: ItemScope): Promise<{ nextDueInMs?: number }> {
    const driver = this.deps.drivers.forToolset(scope.toolset);
    // Answers a consumer stored go first; a call retried with them may replace the handle.
    const next = await this.answers.deliver(item, driver, this.context(item, scope));
    if (next) return this.record(item, next, scope);
    const snapshot = await driver.poll(this.context(item, scope));
    let written: WriteOutcome;
    let delay: number | undefined;
    if (isTerminal(snapshot.status)) {
      written = await this.deps.leases.finish(item.lease, snapshot, true);
    } else {
      delay = this.deps.scheduler.afterSuccess(snapshot);
      written = await this.deps.leases.applyPoll(item.lease, snapshot, delay);
    }
    if (written === 'lease_lost') throw new LeaseLostError(item.id);
    // A cancel request overtook the poll: the row is due now for the cancel phase.
    if (written === 'cancel_pending') return { nextDueInMs: 0 };
    this.transition(item, snapshot.status);
    return { nextDueInMs: delay };
  }

  private async cancel(item: ClaimedTask, scope: ItemScope): Promise<{ nextDueInMs?: number }> {
    const snapshot = await this.deps.drivers
      .forToolset(scope.toolset)
      .cancel(this.context(item, scope));
    if (!isTerminal(snapshot.status)) {
      throw new TransientTaskError(
        `cancel answered status "${snapshot.status}", not a final state`,
      );
    }
    await this.finish(item, snapshot);
    return {};
  }

  private async driverSubmit(
    item: ClaimedTask,
    scope: ItemScope,
    onProgress?: DriverContext['onProgress'],
  ): Promise<SubmitOutcome> {
    try {
      return await this.deps.drivers
        .forToolset(scope.toolset)
        .submit(this.context(item, scope, onProgress));
    } catch (error) {
      if (error instanceof TransientTaskError && !scope.controller.signal.aborted) {
        throw new SubmitNotLandedError(error.message, { cause: error });
      }
      throw error;
    }
  }

  /**
   * Stores the handle an upstream returned (leases.md, "Remote handles"): the fenced write is
   * retried until the lease expires; once the lease is gone the write still lands if nobody
   * claimed the row since (our token is still on it); failing that, the upstream task is
   * cancelled best-effort and the handle logged at error level, so no handle vanishes silently.
   */
  private async storeHandle(
    item: ClaimedTask,
    handle: RemoteHandle,
    snapshot: TaskSnapshot | undefined,
    delay: number,
    scope: ItemScope,
  ): Promise<void> {
    const { leases, settings } = this.deps;
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
    const giveUpAt = Date.now() + settings.lease.ms;
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
      await this.deps.drivers.forToolset(scope.toolset).cancel(this.context(task, cancelScope));
      scope.log.error(fields, 'cancelled the upstream task whose handle could not be stored');
    } catch (error) {
      scope.log.error({ ...fields, err: error }, 'could not cancel the orphaned upstream task');
    }
  }

  private context(
    item: ClaimedTask,
    scope: ItemScope,
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
      workerId: this.deps.workerId,
      limits: {
        maxResultBytes: this.deps.settings.results.maxBytes,
        previewChars: this.deps.settings.results.previewChars,
      },
      signal: scope.signal,
      onProgress,
    };
  }

  private transition(item: ClaimedTask, to: TaskStatus): void {
    if (to !== item.status) this.deps.metrics.transitions.inc({ toolset: item.toolset, to });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
