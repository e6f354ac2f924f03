// Guards the cancel notices of held sync calls (docs/leases.md, "Timeouts"): a notice that came
// between a row's claim and its call's start is not lost. And a lease that ran out in an outage
// is renewed under our token when nobody claimed the row since (docs/leases.md, "A call's end").
import { LeaseLostError } from '@app/common';
import type { TaskLease, TaskLeaseRepository } from '@app/persistence';
import pino from 'pino';
import { HeldCallGuard, HeldCalls } from './held-call.guard';
import { ItemAbort } from './item-abort';

type RenewalOutcome = Awaited<ReturnType<TaskLeaseRepository['renewWatchingCancel']>>;

/**
 * A guard over a renewal that answers each of `outcomes` in turn (a rejection for an error),
 * counting its calls; its timer never fires. `leftMs`: the lease's time left on its clock.
 */
function guardWith(
  outcomes: RenewalOutcome | Array<RenewalOutcome | Error>,
  leftMs = 600_000,
): {
  guard: HeldCallGuard;
  controller: AbortController;
  renewals: () => number;
  lines: string[];
} {
  const answers = Array.isArray(outcomes) ? outcomes : [outcomes];
  let renewals = 0;
  const controller = new AbortController();
  const leases = {
    renewWatchingCancel: (): Promise<RenewalOutcome> => {
      const answer = answers[Math.min(renewals, answers.length - 1)];
      renewals += 1;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  };
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
  const guard = new HeldCallGuard(leases, {} as TaskLease, 600_000, {
    controller,
    log,
    leaseExpiresAtMs: Date.now() + leftMs,
  });
  return { guard, controller, renewals: () => renewals, lines };
}

/** The `msg` of each line a guard logged. */
const messages = (lines: string[]) =>
  lines.map((line) => (JSON.parse(line) as { msg: string }).msg);

const unavailable = () => new Error('Connection terminated');

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

describe('HeldCallGuard: a lease that ran out while the database was away', () => {
  // The renewal is fenced by the token alone (group-commit.test.ts shows it lands past the
  // expiry): here the guard's side, with the lease already run out on its clock.
  it('is renewed under our token when no other claim took the row, and the call goes on', async () => {
    const { guard, controller, lines } = guardWith([unavailable(), 'renewed'], 0);
    await guard.checkNow();
    await guard.checkNow();
    expect(controller.signal.aborted).toBe(false);
    expect(messages(lines)).toContain(
      'renewed the lease after it expired: no other claim took the row meanwhile',
    );
  });

  it('aborts the call as lost when another claim took the row', async () => {
    const { guard, controller } = guardWith([unavailable(), new LeaseLostError('t1')], 0);
    await guard.checkNow();
    await guard.checkNow();
    expect((controller.signal.reason as ItemAbort).kind).toBe('lease_lost');
  });

  it('aborts for a cancel the late renewal reports', async () => {
    const { guard, controller } = guardWith([unavailable(), 'deadline_cancel'], 0);
    await guard.checkNow();
    await guard.checkNow();
    const reason = controller.signal.reason as ItemAbort;
    expect([reason.kind, reason.forDeadline]).toEqual(['cancel', true]);
  });
});

describe('HeldCallGuard: a renewal the database could not serve', () => {
  afterEach(() => jest.useRealTimers());

  it('is tried again within seconds, backing off, not at the next interval', async () => {
    jest.useFakeTimers();
    let renewals = 0;
    const leases = {
      renewWatchingCancel: (): Promise<RenewalOutcome> =>
        ++renewals < 3
          ? Promise.reject(new Error('Connection terminated'))
          : Promise.resolve('renewed'),
    };
    const controller = new AbortController();
    const log = pino({ level: 'silent' });
    const guard = new HeldCallGuard(leases, {} as TaskLease, 60_000, {
      controller,
      log,
      leaseExpiresAtMs: Date.now() + 60_000,
    });
    guard.start();
    await guard.checkNow();
    expect(renewals).toBe(1);
    await jest.advanceTimersByTimeAsync(250);
    expect(renewals).toBe(2);
    await jest.advanceTimersByTimeAsync(500);
    expect(renewals).toBe(3);
    // Renewed: the next renewal is the interval's, a third of the lease after the start.
    await jest.advanceTimersByTimeAsync(10_000);
    expect(renewals).toBe(3);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(renewals).toBe(4);
    await guard.stop();
    expect(controller.signal.aborted).toBe(false);
  });
});
