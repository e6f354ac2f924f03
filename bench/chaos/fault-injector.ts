import type { FailoverTimes } from '../../test/helpers/postgres-failover';
import { ChaosDatabase } from './chaos-database';
import { ChaosOptions } from './chaos-options';
import { DemoUpstream } from './demo-upstream';
import { FaultEvent, PlannedFault } from './fault-schedule';
import { PollerSlot } from './poller-slot';
import { SeededRandom } from './seeded-random';

export interface FaultTargets {
  db: ChaosDatabase;
  pollers: PollerSlot[];
  /** Restarted (crash + start on the same port and state file). */
  restartable: DemoUpstream;
  /** Hung (SIGSTOP) for `hangMs`. */
  hangable: DemoUpstream;
}

// A killed poller comes back after this long: long enough that its claims are taken over by
// the others (or expire) first, as with a pod being rescheduled.
const RESPAWN_DELAY_MS = 1500;

/**
 * Fires the planned faults at their times (timers decide WHEN a fault happens; nothing waits
 * on them for synchronisation) and records what happened. `done()` resolves once every fault
 * and its recovery (restart, SIGCONT) has finished.
 */
export class FaultInjector {
  readonly events: FaultEvent[] = [];
  readonly errors: string[] = [];
  readonly skipped: string[] = [];
  /** The failover's steps, when one was injected (docs/chaos.md, "Postgres failover"). */
  failover?: FailoverTimes;
  private readonly running: Promise<void>[] = [];

  constructor(
    private readonly targets: FaultTargets,
    private readonly options: ChaosOptions,
    private readonly random: SeededRandom,
  ) {}

  schedule(faults: PlannedFault[], startedAt: number): void {
    for (const fault of faults) {
      this.running.push(
        new Promise<void>((resolve) => {
          setTimeout(
            () => {
              this.fire(fault)
                .catch((error: unknown) => this.errors.push(`${fault.kind}: ${String(error)}`))
                .finally(resolve);
            },
            Math.max(0, startedAt + fault.atMs - Date.now()),
          );
        }),
      );
    }
  }

  async done(): Promise<void> {
    await Promise.all(this.running);
  }

  count(kind: FaultEvent['kind']): number {
    return this.events.filter((e) => e.kind === kind).length;
  }

  private async fire(fault: PlannedFault): Promise<void> {
    const start = Date.now();
    const { db, restartable, hangable } = this.targets;
    switch (fault.kind) {
      case 'pg-restart':
        await db.restart(this.options.pgDownMs);
        return this.record(fault, 'postgres', start);
      case 'pg-failover': {
        // The event spans the outage: from the primary's crash to the proxy's switch.
        this.failover = await db.failover(this.options.failoverDownMs);
        return this.record(fault, 'postgres', start);
      }
      case 'upstream-restart':
        await restartable.crashAndRestart();
        return this.record(fault, restartable.name, start);
      case 'upstream-hang':
        hangable.hang();
        await delay(this.options.hangMs);
        hangable.resume();
        return this.record(fault, hangable.name, start);
      case 'poller-kill':
      case 'poller-pause':
        return this.hitPoller(fault, start);
    }
  }

  private async hitPoller(fault: PlannedFault, start: number): Promise<void> {
    const live = this.targets.pollers.filter((slot) => slot.ready && !slot.paused);
    // Keep one poller working: a fleet with every member down tests nothing but the restart.
    if (live.length < 2) {
      this.skipped.push(`${fault.kind} at ${Math.round(fault.atMs)} ms: fewer than 2 live pollers`);
      return;
    }
    const slot = this.random.pick(live);
    const target = slot.workerId!;
    if (fault.kind === 'poller-pause') {
      slot.pause();
      await delay(this.options.pauseMs);
      slot.resume();
      return this.record(fault, target, start);
    }
    await slot.kill();
    this.record(fault, target, start);
    await delay(RESPAWN_DELAY_MS);
    await slot.start();
  }

  private record(fault: PlannedFault, target: string, start: number): void {
    this.events.push({ kind: fault.kind, target, start, end: Date.now() });
  }
}

/** The length of an injected fault (how long a process stays stopped), not a synchronisation. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
