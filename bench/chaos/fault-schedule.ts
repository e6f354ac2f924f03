import { ChaosOptions } from './chaos-options';
import { SeededRandom } from './seeded-random';

export type FaultKind =
  | 'poller-kill'
  | 'poller-pause'
  | 'pg-restart'
  | 'pg-failover'
  | 'upstream-restart'
  | 'upstream-hang';

/** A fault to inject, `atMs` after the run starts. */
export interface PlannedFault {
  kind: FaultKind;
  atMs: number;
}

/** A fault as it happened: wall-clock window and, for poller faults, the incarnation hit. */
export interface FaultEvent {
  kind: FaultKind;
  target: string;
  start: number;
  end: number;
}

/**
 * When each fault fires, drawn from the seed: the one-off faults at fixed fractions of the
 * submit window (so they always overlap live work and never each other), the poller faults
 * spread at random over its middle 80 %.
 */
export function planFaults(options: ChaosOptions, random: SeededRandom): PlannedFault[] {
  const window = options.seconds * 1000;
  // The failover run: that one fault, in the middle of the submits.
  if (options.fault === 'failover') return [{ kind: 'pg-failover', atMs: window * 0.5 }];
  const faults: PlannedFault[] = [
    { kind: 'upstream-hang', atMs: window * 0.2 },
    { kind: 'pg-restart', atMs: window * 0.45 },
    { kind: 'upstream-restart', atMs: window * 0.65 },
  ];
  const spread = (): number => window * (0.1 + 0.8 * random.next());
  for (let i = 0; i < options.pollerKills; i++)
    faults.push({ kind: 'poller-kill', atMs: spread() });
  for (let i = 0; i < options.pollerPauses; i++)
    faults.push({ kind: 'poller-pause', atMs: spread() });
  return faults.sort((a, b) => a.atMs - b.atMs);
}
