// Guards the cancel notices of held sync calls (docs/leases.md, "Timeouts"): a notice that came
// between a row's claim and its call's start is not lost.
import type { TaskLease, TaskLeaseRepository } from '@app/persistence';
import pino from 'pino';
import { HeldCallGuard, HeldCalls } from './held-call.guard';
import { ItemAbort } from './item-abort';

type RenewalOutcome = Awaited<ReturnType<TaskLeaseRepository['renewWatchingCancel']>>;

/** A guard over a renewal that answers `outcome`, counting its calls; its timer never fires. */
function guardWith(outcome: RenewalOutcome): {
  guard: HeldCallGuard;
  controller: AbortController;
  renewals: () => number;
} {
  let renewals = 0;
  const controller = new AbortController();
  const leases = {
    renewWatchingCancel: () => {
      renewals += 1;
      return Promise.resolve(outcome);
    },
  };
  const guard = new HeldCallGuard(
    leases,
    {} as TaskLease,
    600_000,
    controller,
    pino({ level: 'silent' }),
  );
  return { guard, controller, renewals: () => renewals };
}

describe('HeldCalls: the cancel notices a held call must not miss', () => {
  it('a guard registered after a notice that came since its claim was sent renews at once', async () => {
    const calls = new HeldCalls();
    const claimSentAtMs = Date.now();
    calls.cancelNoticed();
    const { guard, controller, renewals } = guardWith('cancel_requested');
    calls.add(guard, claimSentAtMs);
    await guard.checkNow();
    expect(renewals()).toBe(1);
    expect(controller.signal.aborted).toBe(true);
    expect((controller.signal.reason as ItemAbort).kind).toBe('cancel');
  });

  it('a notice older than the claim does not make a new guard renew', () => {
    const calls = new HeldCalls();
    calls.cancelNoticed();
    const { guard, renewals } = guardWith('renewed');
    calls.add(guard, Date.now() + 1);
    expect(renewals()).toBe(0);
  });

  it('a notice renews every registered guard, and none once it is removed', async () => {
    const calls = new HeldCalls();
    const a = guardWith('renewed');
    const b = guardWith('renewed');
    calls.add(a.guard, Date.now());
    calls.add(b.guard, Date.now());
    calls.delete(b.guard);
    calls.cancelNoticed();
    await a.guard.checkNow();
    expect([a.renewals(), b.renewals()]).toEqual([1, 0]);
  });
});
