import {
  Contract,
  LeaseLostError,
  TaskSnapshot,
  TaskStatus,
  TransientTaskError,
  isTerminal,
} from '@app/common';
import { Settings, attemptMarginMs } from '@app/config';
import { DriverContext, DriverRegistry, SubmitOutcome } from '@app/drivers';
import { GatewayMetrics } from '@app/metrics';
import { ClaimedTask, TaskLeaseRepository, WriteOutcome } from '@app/persistence';
import type { Preflight } from './crash-rules';
import { HeldCallGuard, HeldCalls } from './held-call.guard';
import { storeEnd } from './call-end';
import { sendFloorMs } from './attempt-deadline';
import { abortKind, abortedForDeadline } from './item-abort';
import { driverContext, ItemScope } from './item-scope';
import { InputDelivery } from './input-delivery';
import { PollScheduler } from './poll-scheduler';
import { ProgressWriter } from './progress.writer';
import { KeptLease, RemoteHandleWriter } from './remote-handle.writer';
import type { PushWatchService } from '../push/push-watch.service';
import { UnrepeatableCalls } from './unrepeatable-calls';
import { SubmitNotLandedError, untilLanded } from './until-landed';

export interface PhaseRunnerDeps {
  settings: Settings;
  workerId: string;
  leases: TaskLeaseRepository;
  drivers: DriverRegistry;
  metrics: GatewayMetrics;
  scheduler: PollScheduler;
  heldCalls: HeldCalls;
  /** Attempts holding a call a repeat could duplicate: kept by a draining poller. */
  calls: UnrepeatableCalls;
  /** Upstreams that push: whether a task's next poll may be the slow safety poll. */
  push?: PushWatchService;
}

/**
 * The three phases of leases.md on one claimed row. Throws typed errors; the caller turns them
 * into the row's next state and the attempt's outcome.
 */
export class PhaseRunner {
  private readonly answers: InputDelivery;
  private readonly handles: RemoteHandleWriter;

  constructor(private readonly deps: PhaseRunnerDeps) {
    this.answers = new InputDelivery(deps.leases, deps.calls);
    this.handles = new RemoteHandleWriter(deps.leases, deps.settings.lease.ms, (item, scope) =>
      deps.drivers.forToolset(scope.toolset).cancel(this.context(item, scope)),
    );
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
   * at the claim or, for a held call, at a renewal), never from this process' clock. Past the
   * lease: under our token alone (`stillOurs`); `storedEarlier` writes nothing (call-end.ts).
   */
  async finish(
    item: ClaimedTask,
    snapshot: TaskSnapshot,
    forDeadline = item.cancelReason === 'deadline',
    how: 'fenced' | 'stillOurs' | 'storedEarlier' = 'fenced',
  ): Promise<boolean> {
    const { leases } = this.deps;
    const deadline = snapshot.status === TaskStatus.Cancelled && forDeadline;
    const stored = deadline ? TaskStatus.Failed : snapshot.status;
    if (how === 'fenced') await leases.finish(item.lease, snapshot);
    else if (how === 'stillOurs') {
      if (!(await leases.finishIfStillOurs(item.lease, snapshot))) return false;
    } else if (!(await leases.endedUnder(item.id, item.claimCount, stored))) return false;
    this.transition(item, stored);
    return true;
  }

  /** Stores the end of a call that cannot be repeated (call-end.ts). */
  private storeEnd(
    item: ClaimedTask,
    snapshot: TaskSnapshot,
    scope: ItemScope,
    keep: () => Promise<boolean>,
    forDeadline = () => item.cancelReason === 'deadline',
  ): Promise<void> {
    return storeEnd({
      taskId: item.id,
      write: () => this.finish(item, snapshot, forDeadline()),
      writeIfStillOurs: () => this.finish(item, snapshot, forDeadline(), 'stillOurs'),
      storedEarlier: () => this.finish(item, snapshot, forDeadline(), 'storedEarlier'),
      keep,
      leaseMs: this.deps.settings.lease.ms,
      log: scope.log,
      status: snapshot.status,
    });
  }

  private async submit(item: ClaimedTask, scope: ItemScope): Promise<{ nextDueInMs?: number }> {
    await this.markSubmitStarted(item, scope);
    this.checkTimeToSend(scope);
    return this.record(item, await this.driverSubmit(item, scope), scope);
  }

  /**
   * A mark that landed late (its writes retried through a database outage) leaves the submit
   * less than its floor: not sent, and the release clears the mark, so the next claim sends it
   * with a whole lease instead of this attempt's deadline (or, for a held call, the lease's end
   * before its first renewal) cutting it (docs/leases.md, "Time to send a submit").
   */
  private checkTimeToSend(scope: ItemScope): void {
    const leaseMs = this.deps.settings.lease.ms;
    const floor = sendFloorMs(scope.server, scope.toolset, leaseMs);
    const left = scope.leaseExpiresAtMs - attemptMarginMs(leaseMs) - Date.now();
    if (left >= floor) return;
    throw new SubmitNotLandedError(
      `submit not sent: its start mark landed ${Math.max(0, Math.round(left))} ms before the ` +
        `attempt's deadline, less than the ${Math.round(floor)} ms it must have left to send ` +
        'it; the next claim sends it',
    );
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
    await untilLanded(scope, 'the submit-started mark', async (retry) => {
      if (retry && (await leases.submitMarkLanded(item.lease, item.submitAttempts))) return;
      await leases.markSubmitStarted(item.lease);
    });
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
      // Answered at once: the end is all there is of the call (docs/leases.md, "A call's end").
      const snapshot = outcome.snapshot ?? { status: TaskStatus.Completed };
      const lease = new KeptLease(this.deps.leases, item, this.deps.settings.lease.ms, scope);
      await this.storeEnd(item, snapshot, scope, () => lease.keep(true));
      return {};
    }
    const snapshot = outcome.snapshot;
    // A first snapshot that is already terminal is polled at once, so the result is fetched and
    // stored by the one code path that stores results.
    const terminal = snapshot !== undefined && isTerminal(snapshot.status);
    const pushed =
      !terminal &&
      (this.deps.push?.covered({
        ...item,
        remoteTaskId: outcome.handle.remoteTaskId,
        remoteSessionId: outcome.handle.sessionId ?? null,
        remoteProtocolVersion: outcome.handle.protocolVersion ?? null,
      }) ??
        false);
    const delay = terminal
      ? 0
      : this.deps.scheduler.afterSuccess(snapshot ?? { status: TaskStatus.Working }, pushed);
    await this.handles.store(item, outcome.handle, snapshot, delay, scope);
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
    await untilLanded(scope, "the held call's working mark", () => leases.markWorking(item.lease));
    this.checkTimeToSend(scope);
    this.transition(item, TaskStatus.Working);
    const guard = new HeldCallGuard(leases, item.lease, settings.lease.ms, scope);
    const progress = new ProgressWriter(leases, item.lease, scope.log);
    guard.start();
    heldCalls.add(guard, item.claimSentAtMs);
    // The exception to the attempt deadline: the lease is renewed while the call is held, and
    // until its end is stored.
    const held = { ...scope, signal: scope.controller.signal };
    try {
      const outcome = await this.driverSubmit(item, held, (p) => progress.push(p));
      await progress.flush();
      const snapshot = outcome.snapshot ?? { status: TaskStatus.Completed };
      const forDeadline = () =>
        item.cancelReason === 'deadline' || abortedForDeadline(scope.controller.signal);
      // The guard renews the lease meanwhile; once it finds the lease gone, so is the claim.
      const keep = () => Promise.resolve(abortKind(scope.controller.signal) !== 'lease_lost');
      await this.storeEnd(item, snapshot, scope, keep, forDeadline);
    } finally {
      heldCalls.delete(guard);
      await guard.stop();
      await progress.flush();
    }
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
      this.deps.push?.ended(item);
      written = await this.deps.leases.finish(item.lease, snapshot, true);
    } else {
      delay = this.deps.scheduler.afterSuccess(snapshot, this.deps.push?.covered(item) ?? false);
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

  private context(
    item: ClaimedTask,
    scope: ItemScope,
    onProgress?: DriverContext['onProgress'],
  ): DriverContext {
    return driverContext(item, scope, this.deps.workerId, this.deps.settings, onProgress);
  }

  private transition(item: ClaimedTask, to: TaskStatus): void {
    if (to !== item.status) this.deps.metrics.transitions.inc({ toolset: item.toolset, to });
  }
}
